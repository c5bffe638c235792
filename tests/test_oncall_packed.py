"""Packed runs keep every verdict per node and per pair (issue #33).

The four-node on-call site of `test_oncall.py`, once as it ships (`perRun`: a run per
test, round and node or pair) and once `packing: packed` (a node pack's Job per round,
one pod per node, a group pack's TrainJob per round and pair), each collected from logs
of the same outcomes (`oncallfactory.write_logs`, `packfactory.write_packed_logs`): the
verdicts of every node, run and pair, and what `retest`, `quarantine`, `history` and
`drill` make of them, are the same. Then issue #31's swaps in packed form.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from oncallfactory import healthy, site_text, write_logs
from packfactory import (
    PackLog,
    failed,
    launcher_log,
    packed,
    pod_log,
    section,
    write_packed_logs,
)
from test_oncall import node_a_slow_alone_too, two_node_pair_ab_slow

from nvcregen.cli import main

SITE_NAME = "h20-3e-four"
Busbw = Any


def collected(tmp: Path, busbw: Busbw, *, packing: bool, edit: Any = None) -> tuple[int, Path]:
    """Collect the four-node site's logs (packed or per run); the exit code and the run."""
    text = packed(site_text()) if packing else site_text()
    tmp.mkdir(parents=True, exist_ok=True)
    site = tmp / "site.yaml"
    site.write_text(text, encoding="utf-8")
    if packing:
        write_packed_logs(tmp / "saved", text, busbw, edit)
    else:
        write_logs(tmp / "saved", text, busbw)
    args = ["collect", "--site", str(site), "--from", str(tmp / "saved"), "--out", str(tmp / "r")]
    result = CliRunner().invoke(main, args)
    assert "Traceback" not in result.output
    (run,) = (tmp / "r" / SITE_NAME).iterdir()
    return result.exit_code, run


def verdicts(run: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((run / "verdicts.json").read_text())
    return found


def statuses(run: Path) -> dict[str, str]:
    return {n["node"]: n["status"] for n in verdicts(run)["nodes"]}


def per_group(run: Path) -> dict[tuple[str, str, str], str]:
    """Every threshold verdict's word per stage, test and group (a node or a pair)."""
    found = {}
    for t in verdicts(run)["thresholds"]:
        for g in t.get("groups") or []:
            found[(t["stage"], t["test"], g["group"])] = g["word"]
    return found


def runs(run: Path) -> dict[tuple[str, str], str]:
    return {(r["stage"], r["test"]): r["word"] for r in verdicts(run)["runs"]}


@pytest.fixture(scope="module", params=[two_node_pair_ab_slow, node_a_slow_alone_too])
def both(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The same outcomes collected per run and packed: (per-run run, packed run)."""
    tmp = tmp_path_factory.mktemp("both")
    code, per_run = collected(tmp / "perrun", request.param, packing=False)
    packed_code, packed_run = collected(tmp / "packed", request.param, packing=True)
    assert code == packed_code == 1
    return per_run, packed_run


@pytest.mark.slow
def test_packed_and_per_run_logs_of_the_same_outcomes_give_the_same_verdicts(both: Any) -> None:
    per_run, packed_run = both
    assert statuses(packed_run) == statuses(per_run)
    assert per_group(packed_run) == per_group(per_run)
    assert per_group(packed_run)[("two-node", "nccl-all-reduce", "g0")] == "fail"
    assert runs(packed_run) == runs(per_run)
    assert verdicts(packed_run)["word"] == verdicts(per_run)["word"] == "fail"
    reasons = {n["node"]: n["reasons"] for n in verdicts(packed_run)["nodes"]}
    assert reasons == {n["node"]: n["reasons"] for n in verdicts(per_run)["nodes"]}
    assert reasons["node-a"][-1].endswith("needs >= 360 GB/s (written >= 2880 Gb/s)") or (
        reasons["node-a"][-1].startswith("failed alone in single-node / nccl-all-reduce g0:")
    )


def test_each_record_of_a_packed_log_is_one_tests_section(both: Any) -> None:
    _, packed_run = both
    records = json.loads((packed_run / "summary.json").read_text())["logs"]
    assert len(records) == 3 * (4 * 5 + 2 * 4)  # rounds x (nodes x tests + pairs x tests)
    pods = [r for r in records if r["stage"] == "single-node"]
    assert {r["path"] for r in pods} == {
        p.relative_to(packed_run).as_posix()
        for p in (packed_run / "logs" / "nvcre").glob("single-node-pack-*.log")
    }
    (one,) = [r for r in pods if (r["test"], r["round"], r["nodes"]) == (
        "dcgm-l2", 2, ["node-c"])]  # fmt: skip
    # chunks of maxConcurrentJobs (2) nodes: node-c is the first pod of the second Job
    assert re.fullmatch(
        r"logs/nvcre/single-node-pack-0-[0-9a-f]{8}-r2-c1-0-\w{5}\.log", one["path"]
    )
    assert (one["group"], one["status"], one["hosts"]) == ("n2", "ok", ["node-c"])
    provenance = json.loads((packed_run / "provenance.json").read_text())
    assert len(provenance["logs"]) == len({r["path"] for r in records}) == 3 * (2 * 4 + 2)


def retest(run: Path, out: Path) -> str:
    args = ["retest", str(run), "--out", str(out), "--site", str(run.parents[2] / "site.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output.replace(str(out), "OUT")


@pytest.mark.slow
def test_retest_of_a_packed_run_pairs_the_same_nodes_and_stays_packed(
    both: Any, tmp_path: Path
) -> None:
    per_run, packed_run = both
    said = retest(packed_run, tmp_path / "packed.yaml")
    assert said == retest(per_run, tmp_path / "perrun.yaml")
    assert said.startswith("retest h20-3e-four-retest: node-")
    site = yaml.safe_load((tmp_path / "packed.yaml").read_text())
    assert site["spec"]["readiness"]["packing"] == "packed"
    per_run_site = yaml.safe_load((tmp_path / "perrun.yaml").read_text())
    assert per_run_site["spec"]["readiness"]["packing"] == "perRun"  # as its site said
    without = site["spec"]["readiness"]
    assert (
        without["stages"]
        == yaml.safe_load((tmp_path / "perrun.yaml").read_text())["spec"]["readiness"]["stages"]
    )
    rendered = CliRunner().invoke(
        main, ["render", str(tmp_path / "packed.yaml"), "--out", str(tmp_path / "out")]
    )
    assert rendered.exit_code == 0, rendered.output


def test_quarantine_and_history_name_the_same_nodes_for_packed_runs(both: Any) -> None:
    per_run, packed_run = both

    def quarantined(run: Path) -> Any:
        args = ["quarantine", str(run), "--site", str(run.parents[2] / "site.yaml")]
        result = CliRunner().invoke(main, [*args, "--format", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        return [n["node"] for n in data["nodes"]], data["notQuarantined"]

    assert quarantined(packed_run) == quarantined(per_run)

    def history(run: Path) -> str:
        args = ["history", str(run.parent), "--format", "json", "--at", "1GiB"]
        result = CliRunner().invoke(main, args)  # 2 GiB rows differ a little to be unique
        assert result.exit_code == 0, result.output
        return re.sub(r"undated-[0-9a-f]{12}", "RUN", result.output)

    assert history(packed_run) == history(per_run)
    series = json.loads(history(packed_run))
    assert "node-a" in json.dumps(series)  # per pair and per node, as per run


def test_drill_names_the_same_fault_on_a_packed_site(tmp_path: Path) -> None:
    text = site_text().replace("deadline: 16h", "deadline: 96h")
    text = text.replace("gpuHours: 260", "gpuHours: 4000")
    for name, site in (("perrun", text), ("packed", packed(text))):
        (tmp_path / f"{name}.yaml").write_text(site, encoding="utf-8")
    said = [
        CliRunner().invoke(main, ["drill", str(tmp_path / f"{n}.yaml"), "--fail", "node-c"])
        for n in ("perrun", "packed")
    ]
    assert said[0].exit_code == said[1].exit_code == 0, said[1].output
    assert said[0].output == said[1].output
    assert said[1].output.splitlines()[-1] == "    FAIL node-c"


# Issue #31's swaps, packed: a log is evidence only for the node or pair that produced it.
PAIR = "nccl-all-reduce"


def moved(target: PackLog, source: PackLog, test: str) -> None:
    """`source`'s section of `test` in place of `target`'s."""
    target.sections[section(target, test)] = source.sections[section(source, test)]


def test_a_nodes_section_in_another_nodes_pod_log_never_passes(tmp_path: Path) -> None:
    """node-b's all-reduce sections in node-a's pod logs, (c, d)'s in (a, b)'s launcher's."""

    def swap(logs: list[PackLog]) -> None:
        for r in (1, 2, 3):
            moved(pod_log(logs, PAIR, r, "node-a"), pod_log(logs, PAIR, r, "node-b"), PAIR)
            moved(launcher_log(logs, r, 0), launcher_log(logs, r, 1), PAIR)

    code, run = collected(tmp_path, node_a_slow_alone_too, packing=True, edit=swap)
    assert (code, verdicts(run)["word"]) == (1, "fail")
    assert statuses(run) == {"node-a": "failed", "node-b": "suspect", "node-c": "untested",
                             "node-d": "untested"}  # fmt: skip
    nodes = {n["node"]: n for n in verdicts(run)["nodes"]}
    first = nodes["node-a"]["reasons"][0]
    assert re.match(
        r"failed alone in single-node / nccl-all-reduce g0: NVC751: round 1 \(single-node-pack-1"
        r"-\S+-r1-c0\): logs/nvcre/single-node-pack-1-\S+-r1-c0-0-\w{5}\.log:\d+: the section of"
        r" nccl-all-reduce is from node node-b \(pod single-node-pack-1-\S+-r1-c0-1-\w{5},"
        r" started \S+\), but its pod's other sections name node-a: another run's evidence;"
        r" NVC751: round 2 ",
        first,
    )
    codes = {(f["code"], f["stage"], f["group"]) for f in verdicts(run)["findings"]}
    assert {("NVC730", "two-node", "g0"), ("NVC740", "two-node", "g1")} <= codes


def test_one_section_copied_into_every_nodes_log_leaves_only_that_node_not_failed(
    tmp_path: Path,
) -> None:
    def copy(logs: list[PackLog]) -> None:
        for r in (1, 2, 3):
            for node in ("node-a", "node-b", "node-d"):
                moved(pod_log(logs, PAIR, r, node), pod_log(logs, PAIR, r, "node-c"), PAIR)

    code, run = collected(tmp_path, healthy, packing=True, edit=copy)
    assert (code, verdicts(run)["word"]) == (1, "fail")
    found = statuses(run)
    assert found == {"node-a": "failed", "node-b": "failed", "node-d": "failed",
                     "node-c": "cleared"}  # fmt: skip
    foreign = [f for f in verdicts(run)["findings"] if f["code"] == "NVC751"]
    assert sorted({(f["group"], f["round"]) for f in foreign}) == [
        (g, r) for g in ("g0", "g1", "g3") for r in (1, 2, 3)
    ]


@pytest.mark.slow
def test_round_one_copied_to_rounds_two_and_three_is_incomplete(tmp_path: Path) -> None:
    def copy(logs: list[PackLog]) -> None:
        for r in (2, 3):
            moved(pod_log(logs, PAIR, r, "node-d"), pod_log(logs, PAIR, 1, "node-d"), PAIR)

    code, run = collected(tmp_path, healthy, packing=True, edit=copy)
    assert (code, verdicts(run)["word"]) == (1, "incomplete")
    assert statuses(run) == {"node-d": "untested", "node-a": "cleared", "node-b": "cleared",
                             "node-c": "cleared"}  # fmt: skip
    copied = [f for f in verdicts(run)["findings"] if f["code"] == "NVC741"]
    assert {(f["group"], f["round"]) for f in copied} == {("g3", 1), ("g3", 2), ("g3", 3)}
    assert all(f["message"].endswith("a copied round proves nothing") for f in copied)


def test_one_dcgm_section_for_every_slot_clears_no_node(tmp_path: Path) -> None:
    """node-b's round-1 dcgm-l1 section over every node's and round's: as per run."""

    def copy(logs: list[PackLog]) -> None:
        source = replace(pod_log(logs, "dcgm-l1", 1, "node-b").sections[0])
        for r in (1, 2, 3):
            for node in ("node-a", "node-b", "node-c", "node-d"):
                target = pod_log(logs, "dcgm-l1", r, node)
                target.sections[section(target, "dcgm-l1")] = source

    code, run = collected(tmp_path, healthy, packing=True, edit=copy)
    assert (code, verdicts(run)["word"]) == (1, "fail")
    assert statuses(run) == {"node-a": "failed", "node-c": "failed", "node-d": "failed",
                             "node-b": "untested"}  # fmt: skip
    nodes = {n["node"]: n for n in verdicts(run)["nodes"]}
    assert len(nodes["node-a"]["reasons"]) == 3  # one a round, each naming node-b
    assert all("is from node node-b" in reason for reason in nodes["node-a"]["reasons"])
    assert nodes["node-b"]["reasons"][0].startswith("incomplete in single-node / dcgm-l1 n1:")


def test_the_report_holds_back_the_same_nodes_for_packed_runs(both: Any, tmp_path: Path) -> None:
    def summary(run: Path, out: Path) -> list[str]:
        result = CliRunner().invoke(main, ["report", str(run), "--out", str(out)])
        assert result.exit_code == 0, result.output
        return (out / "summary.md").read_text().splitlines()[:3]

    per_run, packed_run = both
    lines = summary(packed_run, tmp_path / "packed")
    assert lines == summary(per_run, tmp_path / "perrun")
    assert lines[2].startswith("**Hold back 2 of 4 nodes: node-a (")


@pytest.mark.parametrize("copy_passes", [True, False])
def test_a_second_log_of_a_packed_run_makes_neither_evidence(
    tmp_path: Path, copy_passes: bool
) -> None:
    """Found by review: a pair's launcher log and a copy saved under its TrainJob's name
    were both split, and whichever sorted last silently replaced the other: a passing copy
    hid a failed launcher (exit 0), a failing one failed a healthy pair."""

    def edit(logs: list[Any]) -> None:
        log = launcher_log(logs, 1, 0)
        other = copy.deepcopy(log)
        other.path = log.path.parent / f"{log.run}.log"  # sorts after the launcher pod's
        bad = log if copy_passes else other
        for test in [s.test for s in bad.sections]:
            failed(bad, test)
        logs.append(other)

    code, run = collected(tmp_path, healthy, packing=True, edit=edit)
    summary = json.loads((run / "summary.json").read_text())
    assert code != 0 and summary["verdict"] == "incomplete"
    seconds = [p for p in summary["problems"] if "a second log of" in p]
    assert len(seconds) == 4 and all("neither is read" in p for p in seconds)  # a test each
    pair = {k: v for k, v in runs(run).items() if k[0] == "two-node"}
    assert pair and "pass" not in pair.values() and "fail" not in pair.values()
