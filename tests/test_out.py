"""The committed `out/` tree: valid upstream objects, safe YAML, and what the H20-3e site needs."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcregen.emit.canonical import load_yaml_plain
from nvcregen.kubeschema.registry import default_registry, split_api_version

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
H20 = "h20-3e-lab"
SITES = sorted(p.name for p in OUT.iterdir() if p.is_dir())
YAML_FILES = sorted(p.relative_to(OUT).as_posix() for p in OUT.rglob("*.yaml"))
ALL_FILES = sorted(p.relative_to(OUT).as_posix() for p in OUT.rglob("*") if p.is_file())
# The wrong API group: NVCRE's is nvcre.nvidia.com, which holds it as a substring.
WRONG_GROUP = re.compile(r"(?<![A-Za-z0-9-])cre\.nvidia\.com")
ARGO = "argocd.argoproj.io/sync-options"
FLUX = "kustomize.toolkit.fluxcd.io/prune"

Obj = dict[str, Any]


def load(path: str) -> Obj:
    obj = load_yaml_plain((OUT / path).read_text(encoding="utf-8"))
    assert isinstance(obj, dict)
    return obj


def objects(site: str) -> dict[str, Obj]:
    """Every object of a site, by its path relative to `out/<site>/`."""
    return {
        path.removeprefix(f"{site}/"): load(path)
        for path in YAML_FILES
        if path.startswith(f"{site}/")
    }


def of_kind(site: str, kind: str) -> list[Obj]:
    found = [obj for obj in objects(site).values() if obj["kind"] == kind]
    assert found, f"no {kind} in out/{site}"
    return found


def strings(value: object) -> Iterator[str]:
    """Every string in a value, mapping keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def typed(value: object) -> object:
    """Data with every scalar's type spelled out (True is not 1, 1.0 is not 1), keys included."""
    if isinstance(value, dict):
        return ["dict", [[typed(key), typed(item)] for key, item in value.items()]]
    if isinstance(value, list):
        return ["list", [typed(item) for item in value]]
    return [type(value).__name__, repr(value)]


def test_out_has_the_example_sites() -> None:
    assert H20 in SITES
    assert sorted(p.stem for p in (ROOT / "sites").glob("*.yaml")) == SITES
    assert all(path.startswith(tuple(f"{s}/" for s in SITES)) for path in ALL_FILES)


@pytest.mark.parametrize("kube_version", ["1.30", "1.37"])
@pytest.mark.parametrize("path", YAML_FILES)
def test_every_object_is_valid_upstream(path: str, kube_version: str) -> None:
    problems = default_registry().validate(load(path), kube_version=kube_version)
    assert problems == []


@pytest.mark.parametrize("path", YAML_FILES)
def test_yaml_reads_the_same_in_yaml_1_1_and_1_2(path: str) -> None:
    text = (OUT / path).read_text(encoding="utf-8")
    assert typed(yaml.safe_load(text)) == typed(load_yaml_plain(text))


@pytest.mark.parametrize("path", YAML_FILES)
def test_no_wrong_group_and_no_gbps(path: str) -> None:
    obj = load(path)
    group, _ = split_api_version(obj["apiVersion"]) or ("", "")
    assert group != "cre.nvidia.com"
    assert not group.endswith(".cre.nvidia.com")
    for text in strings(obj):
        assert not WRONG_GROUP.search(text), text
        assert "_gbps" not in text.lower(), text


@pytest.mark.parametrize("path", ALL_FILES)
def test_no_file_mentions_the_wrong_group_or_gbps(path: str) -> None:
    text = (OUT / path).read_text(encoding="utf-8")
    assert not WRONG_GROUP.search(text)
    assert "_gbps" not in text.lower()


def test_wrong_group_pattern() -> None:
    assert WRONG_GROUP.search("cre.nvidia.com/v1alpha1")
    assert WRONG_GROUP.search("results.cre.nvidia.com")
    assert WRONG_GROUP.search("example.com/cre.nvidia.com")
    assert not WRONG_GROUP.search("nvcre.nvidia.com/v1alpha1")
    assert not WRONG_GROUP.search("x-cre.nvidia.com")


@pytest.mark.parametrize("site", SITES)
def test_index_lists_exactly_the_files(site: str) -> None:
    index = json.loads((OUT / site / "index.json").read_text(encoding="utf-8"))
    present = {p.relative_to(OUT / site).as_posix() for p in (OUT / site).rglob("*") if p.is_file()}
    assert set(index["files"]) == present - {"index.json", "images.txt"}
    assert index["site"] == site
    for path, entry in index["files"].items():
        obj = load(f"{site}/{path}")
        assert (entry["apiVersion"], entry["kind"], entry["name"]) == (
            obj["apiVersion"],
            obj["kind"],
            obj["metadata"]["name"],
        )


@pytest.mark.parametrize("site", SITES)
def test_readiness_objects_are_never_pruned(site: str) -> None:
    readiness = {p: o for p, o in objects(site).items() if p.startswith("readiness/")}
    assert readiness
    for path, obj in readiness.items():
        annotations = obj["metadata"].get("annotations", {})
        assert "Prune=false" in annotations.get(ARGO, "").split(","), path
        assert annotations.get(FLUX) == "disabled", path


# The H20-3e site: 8 GPUs and 8 RDMA NICs everywhere, never NVCRE's fallback of 4 and 0.


def test_h20_certifications_ask_for_8_gpus() -> None:
    for cert in of_kind(H20, "Certification"):
        assert cert["spec"]["gpusPerNode"] == 8
        assert cert["spec"]["categories"]
        for category in cert["spec"]["categories"]:
            assert category["options"]["gpusPerNode"] == 8, category["variant"]


def test_h20_workloadruns_ask_for_8_gpus() -> None:
    for run in of_kind(H20, "WorkloadRun"):
        assert run["spec"]["gpusPerNode"] == 8, run["metadata"]["name"]


def test_h20_inter_node_rdma_runs_name_8_nics_in_their_own_resources() -> None:
    """NVCRE does not know H20-3e: its RDMA collectives are WorkloadRuns (issue 12)."""
    assert not [
        category
        for cert in of_kind(H20, "Certification")
        for category in cert["spec"]["categories"]
        if category["options"]["nodesPerJob"] > 1
    ]
    inter_node = [
        run
        for run in of_kind(H20, "WorkloadRun")
        if run["spec"]["numNodes"] > 1 and run["spec"]["mlnxPerNode"]
    ]
    tests = {run["metadata"]["labels"]["nvcregen.io/test"] for run in inter_node}
    assert tests == {"nccl-all-reduce", "nccl-all-gather", "nccl-alltoall"}
    for run in inter_node:
        assert run["spec"]["mlnxPerNode"] == 8
        assert run["spec"]["nicResourceName"] == "rdma/hca"
        assert run["spec"]["resources"]["limits"]["rdma/hca"] == 8
        assert {e["name"]: e["value"] for e in run["spec"]["env"]}["NCCL_NET"] == "IB"


def test_h20_tcp_baseline_disables_rdma_on_every_rank() -> None:
    runs = [
        run
        for run in of_kind(H20, "WorkloadRun")
        if run["metadata"]["labels"].get("nvcregen.io/test") == "nccl-all-reduce-tcp"
    ]
    assert len(runs) == 1
    spec = runs[0]["spec"]
    env = {item["name"]: item["value"] for item in spec["env"]}
    assert env["NCCL_NET"] == "Socket"
    assert env["NCCL_IB_DISABLE"] == "1"
    mpi_args = spec["framework"]["mpi"]["mpiArgs"]
    exported = [value for flag, value in itertools.pairwise(mpi_args) if flag == "-x"]
    assert "NCCL_NET=Socket" in exported
    assert "NCCL_IB_DISABLE=1" in exported
    assert spec["numNodes"] == 2


def test_h20_one_certification_per_stage_with_catalog_tests() -> None:
    site = yaml.safe_load((ROOT / "sites" / f"{H20}.yaml").read_text(encoding="utf-8"))
    catalog = {
        p.stem: yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in (ROOT / "catalog" / "tests").glob("*.yaml")
    }
    expected: dict[str, list[str]] = {}
    for stage in site["spec"]["readiness"]["stages"]:
        # NVCRE does not know H20-3e: RDMA collectives of inter-node stages are WorkloadRuns
        inter = stage["scope"] == "inter-node"
        in_nvcre = [
            t
            for t in stage["tests"]
            if catalog[t].get("nvcre") and not (inter and catalog[t]["transport"] == "fabric")
        ]
        if in_nvcre and not stage.get("pinTransport"):
            expected[stage["name"]] = [catalog[t]["nvcre"]["variant"] for t in in_nvcre]
    assert list(expected) == ["single-node"]

    certs = of_kind(H20, "Certification")
    stages = [cert["metadata"]["labels"]["nvcregen.io/stage"] for cert in certs]
    assert sorted(stages) == sorted(expected)
    for cert in certs:
        stage = cert["metadata"]["labels"]["nvcregen.io/stage"]
        assert [c["variant"] for c in cert["spec"]["categories"]] == expected[stage]
        assert cert["spec"]["repeatCount"] == site["spec"]["readiness"]["rounds"]
