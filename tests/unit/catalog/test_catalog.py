"""Tests of the catalog data and nvcregen.catalog.load, against the real catalog/ folder."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import pytest
from sitefactory import catalog, line_of

from nvcregen.catalog.load import load_catalog, model_key
from nvcregen.core.datafiles import data_dir
from nvcregen.core.errors import NvcregenError, Severity
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.kinds.dcgm.kind import KIND as DCGM

KNOWN = ["H100", "H200", "A100", "L40S", "L40", "B200", "B300", "GB200", "GB300", "RTX PRO 6000"]
UNKNOWN = ["H20", "H20-3e", "L20"]


def test_the_real_catalog_loads() -> None:
    loaded = load_catalog()
    assert {h.model for h in loaded.hardware.values()} == set(KNOWN + UNKNOWN)
    assert set(loaded.tests) == {
        "burn-in",
        "dcgm-l1",
        "dcgm-l2",
        "dcgm-l3",
        "dcgm-l4",
        "nccl-all-gather",
        "nccl-all-reduce",
        "nccl-all-reduce-tcp",
        "node-health",
        "rdma-rails",
        "link-counters",
        "rdma-rails-pair",
        "nccl-alltoall",
        "nvbandwidth",
        "training-goodput",
    }
    assert "h20-3e-2node-roce-all-reduce" in loaded.baselines
    assert loaded.origin("tests", "dcgm-l1") == "tests/dcgm-l1.yaml"
    assert loaded.origin("hardware", "rtx-pro-6000") == "hardware/rtx-pro-6000.yaml"


@pytest.mark.parametrize("written", ["RTX PRO 6000", "rtx-pro-6000", "Rtx_Pro  6000"])
def test_model_lookup_ignores_case_spaces_and_separators(written: str) -> None:
    assert model_key(written) == "rtx-pro-6000"
    found = catalog().find_hardware(written)
    assert found is not None
    assert found.model == "RTX PRO 6000"


def test_unknown_model_is_not_found() -> None:
    assert catalog().find_hardware("H1OO") is None


@pytest.mark.parametrize("model", KNOWN)
def test_models_nvcre_knows(model: str) -> None:
    entry = catalog().find_hardware(model)
    assert entry is not None
    assert entry.nvcre.known is True
    assert entry.nvcre.arch


@pytest.mark.parametrize("model", UNKNOWN)
def test_models_nvcre_does_not_know_fall_back_to_4_gpus_and_0_nics(model: str) -> None:
    entry = catalog().find_hardware(model)
    assert entry is not None
    assert entry.nvcre.known is False
    assert (entry.nvcre.gpus_per_node, entry.nvcre.mlnx_per_node) == (4, 0)
    assert entry.gpus_per_node == 8  # the real shape, which nvcregen writes explicitly


def labels(model: str) -> set[str]:
    entry = catalog().find_hardware(model)
    assert entry is not None
    return set(entry.product_labels)


@pytest.mark.parametrize(
    ("model", "lookalike"), [("H20-3e", "H100"), ("L20", "L40S"), ("H20", "H100")]
)
def test_unknown_models_are_never_labelled_like_a_known_one(model: str, lookalike: str) -> None:
    assert labels(model).isdisjoint(labels(lookalike))
    for known in KNOWN:
        assert labels(model).isdisjoint(labels(known)), known


def test_product_labels_are_unique_across_models() -> None:
    all_labels = [label for h in catalog().hardware.values() for label in h.product_labels]
    assert len(all_labels) == len(set(all_labels))


def test_h20_3e_label_is_not_certain() -> None:
    entry = catalog().find_hardware("H20-3e")
    assert entry is not None
    assert entry.label_certain is False
    assert entry.product_labels == ["NVIDIA-H20-3e"]


def test_every_test_becomes_a_category_or_a_workloadrun() -> None:
    for name, test in catalog().tests.items():
        assert test.name == name
        if test.nvcre is not None:
            assert test.nvcre.domain, name
            assert test.nvcre.variant, name
        else:  # a WorkloadRun: mpi for nccl-tests, exec for DCGM and node health
            kind = kind_of(test)  # or none: a pair runs in trainer mode only (NVC344)
            assert kind.collective or kind.per_node or kind.pair, name
        blocks = {k: b for k, kind in KINDS.items() if (b := kind.block_or_none(test)) is not None}
        assert list(blocks) == [test.kind], name  # its kind's block, and no other


def test_workloadrun_only_tests() -> None:
    without = sorted(n for n, t in catalog().tests.items() if t.nvcre is None)
    assert without == [
        "burn-in",
        "dcgm-l1",
        "dcgm-l2",
        "dcgm-l3",
        "link-counters",
        "nccl-all-reduce-tcp",
        "node-health",
        "nvbandwidth",
        "rdma-rails",
        "rdma-rails-pair",
    ]
    tcp = catalog().tests["nccl-all-reduce-tcp"]
    assert (tcp.transport, tcp.scopes) == ("socket", ["inter-node"])


def test_dcgm_l4_needs_a_hostengine() -> None:
    l4 = catalog().tests["dcgm-l4"]
    assert DCGM.block(l4).needs_hostengine is True
    assert l4.nvcre is not None
    assert l4.nvcre.hostengine
    for name in ("dcgm-l1", "dcgm-l2", "dcgm-l3"):
        assert DCGM.block(catalog().tests[name]).needs_hostengine is False


def test_roce_baseline_rounds_and_median() -> None:
    baseline = catalog().baselines["h20-3e-2node-roce-all-reduce"]
    busbw = [r.busbw for r in baseline.rounds]
    assert busbw == [363.76, 427.58, 452.28]
    assert statistics.median(busbw) == 427.58
    assert (baseline.model, baseline.nodes, baseline.gpus_per_node) == ("H20-3e", 2, 8)
    assert (baseline.test, baseline.scope, baseline.transport) == (
        "nccl-all-reduce",
        "inter-node",
        "IB",
    )
    assert (baseline.at, baseline.unit) == ("1GiB", "GB/s")


def test_baselines_name_models_and_tests_of_the_catalog() -> None:
    for name, baseline in catalog().baselines.items():
        assert catalog().find_hardware(baseline.model) is not None, name
        assert baseline.test in catalog().tests, name


def broken_copy(tmp_path: Path, rel: str, old: str, new: str) -> tuple[Path, str]:
    root = tmp_path / "catalog"
    shutil.copytree(data_dir("catalog"), root)
    text = (root / rel).read_text(encoding="utf-8")
    assert text.count(old) == 1
    text = text.replace(old, new)
    (root / rel).write_text(text, encoding="utf-8")
    return root, text


def test_a_typo_in_a_catalog_entry_points_at_the_file_and_line(tmp_path: Path) -> None:
    root, text = broken_copy(
        tmp_path, "tests/dcgm-l1.yaml", "\nmeasurement: none\n", "\nmeasurment: none\n"
    )
    with pytest.raises(NvcregenError) as caught:
        load_catalog(root)
    diags = caught.value.diagnostics
    assert {d.span.file for d in diags} == {"catalog/tests/dcgm-l1.yaml"}
    assert all(d.code == "NVC220" and d.severity is Severity.ERROR for d in diags)
    by_message = {d.message: d for d in diags}
    unknown = by_message["unknown key 'measurment'"]
    assert (unknown.path, unknown.span.line, unknown.span.column) == (
        "/measurment",
        line_of(text, "measurment"),
        1,
    )
    assert "missing required key 'measurement'" in by_message
    assert "catalog/tests/dcgm-l1.yaml" in str(caught.value)


BLOCK = "\ndcgm:\n  level: 1\n  needsHostengine: false\n  expectedDuration: 1m\n"
NODE_TOO = "\nmeasurement: none\nnode: {expectedDuration: 1s}\n"


@pytest.mark.parametrize(
    ("old", "new", "found"),
    [
        (BLOCK, "\n", "none"),
        ("\nkind: dcgm\n", "\nkind: node\n", "`dcgm`"),
        ("\nmeasurement: none\n", NODE_TOO, "`dcgm`, `node`"),
    ],
)
def test_a_test_without_its_kinds_block_or_with_anothers_is_refused(
    tmp_path: Path, old: str, new: str, found: str
) -> None:
    root, _ = broken_copy(tmp_path, "tests/dcgm-l1.yaml", old, new)
    with pytest.raises(NvcregenError) as caught:
        load_catalog(root)
    messages = {d.message for d in caught.value.diagnostics if d.code == "NVC220"}
    kind = "node" if "kind: node" in new else "dcgm"
    assert any(
        f"a {kind} test takes a `{kind}` block and no other (found: {found})" in m for m in messages
    ), messages
    assert {d.span.file for d in caught.value.diagnostics} == {"catalog/tests/dcgm-l1.yaml"}


def test_a_broken_images_file_names_its_catalog_path(tmp_path: Path) -> None:
    root, text = broken_copy(tmp_path, "images.yaml", "\ndcgm: ", "\ndcmg: ")
    with pytest.raises(NvcregenError) as caught:
        load_catalog(root)
    unknown = next(d for d in caught.value.diagnostics if d.message == "unknown key 'dcmg'")
    assert unknown.span.file == "catalog/images.yaml"
    assert unknown.span.line == line_of(text, "dcmg")


def test_invalid_yaml_in_the_catalog_is_an_error(tmp_path: Path) -> None:
    root, _ = broken_copy(tmp_path, "hardware/l20.yaml", "gpusPerNode: 8\n", "gpusPerNode: [8\n")
    with pytest.raises(NvcregenError) as caught:
        load_catalog(root)
    assert {d.span.file for d in caught.value.diagnostics} == {"catalog/hardware/l20.yaml"}
    assert all(d.code.startswith("NVC1") for d in caught.value.diagnostics)
