"""The logs a rehearsal's pods serve (issue #34, item 2): made from the plan, read back by
the product's own readers, and collected into the verdicts the on-call tests expect.

Pure: no twin. The shipped site's compiled runs get, pod by pod, the log its run would
print (`nvcregen/rehearse/podlogs.py`), saved as `kubectl logs` would and collected with
`collect --from`: every verdict passes; with node-a failing, node-a is failed and node-b
(its pair in the two-node stage) suspect, as `tests/test_oncall_packed.py` finds for the
same outcomes printed by the test factories.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from trainerfactory import compiled

from nvcregen.cli import main
from nvcregen.collect.collector import load_site_file
from nvcregen.collect.model import LoadedSite
from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.placement import Placement
from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.kinds.nccl.reader import parse_nccl
from nvcregen.plan.physics import busbw_at, measured_sizes
from nvcregen.rehearse.dcgmdiagprint import dcgm_version, diag_json
from nvcregen.rehearse.failing import Failing, failing
from nvcregen.rehearse.kwoklogs import cri_text, logs_object
from nvcregen.rehearse.podlogs import launcher_log, node_pack_log, run_pod_log
from nvcregen.rehearse.printer import FAILING_SHARE, PackPod, Printer
from nvcregen.results.packlogs import sections

ROOT = Path(__file__).resolve().parents[3]
SITE = ROOT / "sites" / "h20-3e-trainer.yaml"
START = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
SINGLE = ("dcgm-l1", "dcgm-l2", "nccl-all-reduce", "nccl-all-gather", "nccl-alltoall")
GIB = 1 << 30
PAIR = ("nccl-all-reduce", "nccl-all-gather", "nccl-alltoall", "nccl-all-reduce-tcp")


@pytest.fixture(scope="module")
def loaded() -> LoadedSite:
    return load_site_file(ROOT, str(SITE))


def printer(loaded: LoadedSite, *failing_nodes: str) -> Printer:
    return Printer(loaded.plan.units, loaded.plan.catalog, frozenset(failing_nodes))


def unit_of(loaded: LoadedSite, stage: str, test: str) -> Any:
    (found,) = [u for u in loaded.plan.units if u.stage.name == stage and u.test.name == test]
    return found


def single(round_: int = 1, node: str = "node-a", pod: str = "pack-0-r1-c0-0-abcde") -> PackPod:
    return PackPod("single-node", SINGLE, round_, (node,), pod, START)


def pair(round_: int = 1) -> PackPod:
    return PackPod("two-node", PAIR, round_, ("node-a", "node-b"), f"pack-r{round_}-g0", START)


# --- DCGM ---


def test_dcgm_json_reads_back_as_every_test_of_its_level_passing() -> None:
    (run,) = parse_dcgm(diag_json(1, 8, "4.5.2"), "l1")
    assert run.status == "ok" and run.dcgm_version == "4.5.2"
    assert [t.name for t in run.tests][-1] == "Inforom"
    assert {t.result for t in run.tests} == {"Pass"}
    (two,) = parse_dcgm(diag_json(2, 8, "4.5.2"), "l2")
    assert [t.name for t in two.tests][-2:] == ["PCIe", "GPU Memory"]
    assert {g.id for g in two.tests[-1].gpus} == set(range(8))


def test_a_failed_dcgm_run_fails_its_last_test_on_gpu_0() -> None:
    (run,) = parse_dcgm(diag_json(2, 8, "4.5.2", failed=True), "l2")
    assert run.status == "failed"
    last = run.tests[-1]
    assert (last.name, last.result) == ("GPU Memory", "Fail")
    assert [g.id for g in last.gpus if g.result == "Fail"] == [0]
    assert [g.id for g in last.gpus if g.result == "Pass"] == list(range(1, 8))
    assert last.errors and "GPU 0" in last.errors[0]
    assert {t.result for t in run.tests[:-1]} == {"Pass"}


def test_the_dcgm_version_is_the_images_tag() -> None:
    image = "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04@sha256:" + "9" * 64
    assert dcgm_version(image) == "4.5.2"
    assert dcgm_version("registry/dcgm@sha256:" + "1" * 64) == ""


# --- a node pack's pod ---


def test_a_node_packs_pod_prints_a_section_per_test_in_order(loaded: LoadedSite) -> None:
    text = node_pack_log(printer(loaded), single())
    found, problems = sections(text)
    assert problems == []
    assert [s.test for s in found] == list(SINGLE)
    assert {(s.node, s.pod, s.rc) for s in found} == {("node-a", "pack-0-r1-c0-0-abcde", 0)}
    starts = re.findall(r"@@nvcregen-pack begin .* start=(\S+)", text)
    assert starts[0] == "2026-12-06T09:00:00Z"
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # each section starts when the one before would have ended: the plan's durations
    l1 = unit_of(loaded, "single-node", "dcgm-l1").expected_ms // 1000
    assert starts[1] == f"2026-12-06T09:{l1 // 60:02d}:{l1 % 60:02d}Z"


def test_dcgm_in_a_pack_names_the_node_and_pod_and_exits_with_its_level(
    loaded: LoadedSite,
) -> None:
    text = node_pack_log(printer(loaded), single())
    first = text.split("@@nvcregen-pack end test=dcgm-l1 rc=0\n")[0]
    assert (
        "@@nvcregen-dcgm begin node=node-a pod=pack-0-r1-c0-0-abcde start=2026-12-06T09:00:00Z"
        in first
    )
    assert re.search(r"\nnvcregen: dcgmi diag --run 1 exit=0 seconds=\d+\n$", first)
    assert "nvcregen: dcgm-l1 exit=" not in first  # DCGM's own script prints its exit line


def test_nccl_in_a_pack_runs_on_the_pods_host_at_the_expected_figure(loaded: LoadedSite) -> None:
    text = node_pack_log(printer(loaded), single())
    body = text.split("@@nvcregen-pack begin test=nccl-all-reduce")[1].split("@@nvcregen-pack end")[
        0
    ]
    assert re.search(r"\nnvcregen: nccl-all-reduce exit=0 seconds=\d+\n$", body)
    (run,) = parse_nccl(body, "pod")
    assert run.hosts == ("pack-0-r1-c0-0-abcde",) and len(run.ranks) == 8
    assert run.transports == ()  # one node: no network
    unit = unit_of(loaded, "single-node", "nccl-all-reduce")
    assert [r.size_bytes for r in run.rows] == [
        s for s in measured_sizes(unit, loaded.plan.catalog) if s
    ]
    for row in run.rows:  # at most three steps of 0.1% below the physics model's figure
        expected = busbw_at(unit, loaded.plan.catalog, row.size_bytes)
        assert expected is not None
        read = row.out_of_place.busbw_gbs
        assert read is not None
        # (the time is printed rounded: the figure read back may be a hair above)
        assert expected * 0.996 - 0.03 <= read <= expected * 1.001 + 0.01
    assert run.rows[-1].size_bytes == 16 * GIB  # up to the sweep's largest size


def test_rounds_never_print_the_same_table(loaded: LoadedSite) -> None:
    tables = set()
    for round_ in range(1, 17):
        text = node_pack_log(printer(loaded), single(round_, pod="same-pod"))
        body = text.split("test=nccl-all-reduce-")[0].split("test=nccl-all-reduce ")[1]
        (run,) = parse_nccl(body.split("\n", 1)[1], "pod")
        tables.add(tuple(r.out_of_place.busbw_gbs for r in run.rows))
    assert len(tables) == 16


@pytest.mark.slow
def test_two_pods_of_a_round_never_print_the_same_table(loaded: LoadedSite) -> None:
    """Found rehearsing the shipped site: node-a's and node-b's all-to-all of round 2 were
    the same table (NVC740) while only two sizes varied by a hash; every size does now."""
    tables = set()
    for index in range(200):
        text = node_pack_log(printer(loaded), single(2, node=f"node-{index}", pod=f"p-2-{index}"))
        for test in ("nccl-all-reduce", "nccl-all-gather", "nccl-alltoall"):
            body = text.split(f"test={test} ")[1].split("\n", 1)[1].split("@@nvcregen-pack end")[0]
            (run,) = parse_nccl(body, "pod")
            tables.add((test, tuple(r.out_of_place.busbw_gbs for r in run.rows)))
    assert len(tables) == 600


def test_a_failing_nodes_pack_fails_dcgm_and_prints_a_tenth_of_nccl(loaded: LoadedSite) -> None:
    healthy = node_pack_log(printer(loaded), single(node="node-b"))
    text = node_pack_log(printer(loaded, "node-a"), single())
    assert healthy == node_pack_log(printer(loaded, "node-a"), single(node="node-b"))
    found, _ = sections(text)
    assert [(s.test, s.rc) for s in found] == [
        ("dcgm-l1", 1), ("dcgm-l2", 1), ("nccl-all-reduce", 0), ("nccl-all-gather", 0),
        ("nccl-alltoall", 0),
    ]  # fmt: skip
    assert "nvcregen: dcgmi diag --run 2 exit=1 seconds=" in text
    body = text.split("test=nccl-all-reduce ")[1].split("\n", 1)[1].split("@@nvcregen-pack end")[0]
    (run,) = parse_nccl(body, "pod")
    expected = busbw_at(unit_of(loaded, "single-node", "nccl-all-reduce"), loaded.plan.catalog, GIB)
    assert expected is not None
    at = next(r for r in run.rows if r.size_bytes == GIB).out_of_place.busbw_gbs
    assert at is not None
    assert expected * FAILING_SHARE - 0.05 <= at <= expected * FAILING_SHARE + 0.01


# --- a group pack's launcher ---


def test_a_launcher_prints_each_test_over_the_groups_hosts(loaded: LoadedSite) -> None:
    text = launcher_log(printer(loaded), pair())
    found, problems = sections(text)
    assert problems == []
    assert [(s.test, s.node, s.pod, s.rc) for s in found] == [(t, "", "", 0) for t in PAIR]
    for test in PAIR:
        assert re.search(
            rf"\nnvcregen: {test} exit=0 seconds=\d+\n@@nvcregen-pack end test={test} rc=0\n", text
        )
    runs = parse_nccl(text, "launcher")
    assert [r.hosts for r in runs] == [("node-a", "node-b")] * 4
    assert [r.transports for r in runs] == [("IB",), ("IB",), ("IB",), ("Socket",)]
    assert all(len(r.ranks) == 16 for r in runs)


def test_a_run_holding_a_failing_node_fails_every_figure(loaded: LoadedSite) -> None:
    runs = parse_nccl(launcher_log(printer(loaded, "node-b"), pair()), "launcher")
    for test, run in zip(PAIR, runs, strict=True):
        expected = busbw_at(unit_of(loaded, "two-node", test), loaded.plan.catalog, GIB)
        assert expected is not None
        at = next(r for r in run.rows if r.size_bytes == GIB).out_of_place.busbw_gbs
        assert at is not None
        assert at <= expected * FAILING_SHARE + 0.01, test


def test_a_failing_link_fails_runs_across_it_only(loaded: LoadedSite) -> None:
    leaves = {"node-a": "leaf-1", "node-b": "leaf-2", "node-c": "leaf-1"}
    link = Printer(
        loaded.plan.units,
        loaded.plan.catalog,
        links=frozenset({frozenset({"leaf-1", "leaf-2"})}),
        leaves=leaves,
    )
    assert link.fails(("node-a", "node-b"))
    assert not link.fails(("node-a", "node-c"))
    assert not link.fails(("node-a",))  # a node alone crosses no link: its DCGM passes
    assert not Printer(loaded.plan.units, loaded.plan.catalog).fails(("node-a", "node-b"))


def test_a_pods_log_follows_its_run(loaded: LoadedSite) -> None:
    objects = [m.obj for m in compiled(SITE.read_text()) if m.kind in {"TrainJob", "Job"}]
    job = next(
        o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("-r2-c0")
    )
    trainjob = next(o for o in objects if o["kind"] == "TrainJob")
    made = run_pod_log(printer(loaded), job, "p", ["node-b"], START, launcher=False)
    tests = job["metadata"]["annotations"]["nvcregen.io/tests"].split(",")
    assert [s.test for s in sections(made)[0]] == tests
    assert {s.node for s in sections(made)[0]} == {"node-b"}
    launched = run_pod_log(
        printer(loaded), trainjob, "l", ["node-a", "node-b"], START, launcher=True
    )
    assert [s.test for s in sections(launched)[0]] == list(PAIR)
    # a TrainJob's workers, a run without tests, a pod without a node: nothing to read
    assert (
        run_pod_log(printer(loaded), trainjob, "w", ["node-a", "node-b"], START, launcher=False)
        == ""
    )
    bare = {"kind": "Job", "metadata": {"name": "x", "labels": {}, "annotations": {}}}
    assert run_pod_log(printer(loaded), bare, "p", ["node-a"], START, launcher=False) == ""
    assert run_pod_log(printer(loaded), job, "p", [], START, launcher=False) == ""


def test_a_test_not_in_the_plan_prints_why_and_fails(loaded: LoadedSite) -> None:
    text = node_pack_log(printer(loaded), replace(single(), tests=("no-such-test",)))
    (found,), _ = sections(text)
    assert found.rc == 1 and "nvcregen rehearse: no-such-test is not in the plan" in text


# --- the whole site, collected ---


def write_site_logs(folder: Path, made: Printer) -> Path:
    """Every pod's log of the shipped site's runs, saved as `kubectl logs` saves them."""
    objects = [m.obj for m in compiled(SITE.read_text()) if m.kind in {"TrainJob", "Job"}]
    for obj in objects:
        meta = obj["metadata"]
        nodes = meta["annotations"]["nvcregen.io/nodes"].split(",")
        where = folder / "logs" / meta["namespace"]
        where.mkdir(parents=True, exist_ok=True)
        if obj["kind"] == "Job":
            for index, node in enumerate(nodes):
                pod = f"{meta['name']}-{index}-k{index}x9"
                (where / f"{pod}.log").write_text(
                    run_pod_log(made, obj, pod, [node], START, launcher=False)
                )
            continue
        pod = f"{meta['name']}-launcher-0-0-q7w2e"
        (where / f"{pod}.log").write_text(run_pod_log(made, obj, pod, nodes, START, launcher=True))
    listing = dump_yaml({"apiVersion": "v1", "kind": "List", "items": objects})
    (folder / "objects.yaml").write_text(listing, encoding="utf-8")
    return folder


def collected(tmp: Path, made: Printer) -> tuple[int, dict[str, Any]]:
    saved = write_site_logs(tmp / "saved", made)
    args = ["collect", "--site", str(SITE), "--from", str(saved), "--out", str(tmp / "r")]
    result = CliRunner().invoke(main, args)
    assert "Traceback" not in result.output
    (run,) = (tmp / "r" / "h20-3e-trainer").iterdir()
    verdicts: dict[str, Any] = json.loads((run / "verdicts.json").read_text())
    return result.exit_code, verdicts


@pytest.mark.slow
def test_the_shipped_sites_logs_collect_to_pass(tmp_path: Path, loaded: LoadedSite) -> None:
    code, verdicts = collected(tmp_path, printer(loaded))
    assert (code, verdicts["word"]) == (0, "pass")
    assert {n["node"]: n["status"] for n in verdicts["nodes"]} == {
        "node-a": "cleared",
        "node-b": "cleared",
    }
    assert verdicts.get("findings", []) == []


@pytest.mark.slow
def test_a_failing_node_is_failed_and_its_pair_suspect(tmp_path: Path, loaded: LoadedSite) -> None:
    code, verdicts = collected(tmp_path, printer(loaded, "node-a"))
    assert (code, verdicts["word"]) == (1, "fail")
    assert {n["node"]: n["status"] for n in verdicts["nodes"]} == {
        "node-a": "failed",
        "node-b": "suspect",
    }
    counts = {t["test"]: t["word"] for t in verdicts["runs"] if t["stage"] == "two-node"}
    assert counts["nccl-all-reduce-tcp"] != "incomplete"  # no round reads as another's copy


# --- --fail ---


def test_fail_names_a_node_of_the_site(loaded: LoadedSite) -> None:
    pools = list({u.pool.spec.name: u.pool for u in loaded.plan.units}.values())
    nodes = ["node-a", "node-b"]
    assert failing(None, pools, nodes) == Failing()
    assert failing("node-a", pools, nodes) == Failing(nodes=frozenset({"node-a"}))
    assert failing("node-z", pools, nodes) == (
        "--fail node-z: not a node of the site (its nodes: node-a, node-b)"
    )
    assert "needs the site's inventory" in str(failing("leaf-1,leaf-2", pools, nodes))
    for bad in ("leaf-1,leaf-1", "a,b,c", "leaf-1,"):
        assert str(failing(bad, pools, nodes)).endswith(
            "a node, or two different leaves as LEAF-A,LEAF-B"
        )


def test_fail_names_a_link_between_two_leaves_of_the_inventory(loaded: LoadedSite) -> None:
    pool = loaded.plan.units[0].pool
    placed = replace(
        pool,
        placement=Placement(("node-a", "node-b"), {"node-a": "leaf-1", "node-b": "leaf-2"}, {}),
    )
    found = failing("leaf-1,leaf-2", [placed], ["node-a", "node-b"])
    assert found == Failing(
        links=frozenset({frozenset({"leaf-1", "leaf-2"})}),
        leaves={"node-a": "leaf-1", "node-b": "leaf-2"},
    )
    assert failing("leaf-1,leaf-9", [placed], ["node-a"]) == (
        "--fail leaf-1,leaf-9: leaf-9 is no leaf of the inventory (leaf-1, leaf-2)"
    )


# --- kwok ---


def test_logs_are_written_in_cri_format_one_record_a_line() -> None:
    at = datetime(2026, 12, 6, 9, 0, 1, 250000, tzinfo=UTC)
    assert cri_text("a\nb c\n", at) == (
        "2026-12-06T09:00:01.250000000Z stdout F a\n2026-12-06T09:00:01.250000000Z stdout F b c\n"
    )
    assert cri_text("", at) == ""


def test_a_logs_object_is_named_after_its_pod(tmp_path: Path) -> None:
    obj = logs_object("nvcre", "pod-1", tmp_path / "p.log")
    assert obj["apiVersion"] == "kwok.x-k8s.io/v1alpha1" and obj["kind"] == "Logs"
    assert obj["metadata"] == {"name": "pod-1", "namespace": "nvcre"}
    assert obj["spec"] == {"logs": [{"logsFile": str(tmp_path / "p.log"), "follow": False}]}
    named = logs_object("nvcre", "pod-1", tmp_path / "p.log", ["node"])
    assert named["spec"]["logs"][0]["containers"] == ["node"]
