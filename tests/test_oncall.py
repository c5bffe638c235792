"""On-call questions answered from a failing run (issue #13): which node, what to retest.

A four-node trainer-mode site, collected from saved logs written as the tools print them
(`oncallfactory.py`), then reported, as an on-call engineer would read it.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from oncallfactory import healthy, site_text, write_logs
from test_quarantine import forged

from nvcregen.cli import main

SITE_NAME = "h20-3e-four"


def two_node_pair_ab_slow(stage: str, test: str, nodes: tuple[str, ...]) -> float:
    """The two-node all-reduce of (node-a, node-b) at 300 GB/s; everything else healthy."""
    if (stage, test) == ("two-node", "nccl-all-reduce") and "node-a" in nodes:
        return 300.0
    return healthy(stage, test, nodes)


def node_a_slow_alone_too(stage: str, test: str, nodes: tuple[str, ...]) -> float:
    """node-a also fails its own single-node all-reduce (310 < 420 GB/s)."""
    if (stage, test, nodes) == ("single-node", "nccl-all-reduce", ("node-a",)):
        return 310.0
    return two_node_pair_ab_slow(stage, test, nodes)


def collect_and_report(tmp: Path, busbw: object) -> Path:
    site = tmp / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    write_logs(tmp / "saved", site_text(), busbw)  # type: ignore[arg-type]
    runner = CliRunner()
    args = [
        "collect",
        "--site",
        str(site),
        "--from",
        str(tmp / "saved"),
        "--out",
        str(tmp / "results"),
    ]
    assert runner.invoke(main, args).exit_code == 1  # a threshold failed
    report = runner.invoke(
        main, ["report", str(tmp / "results" / SITE_NAME), "--out", str(tmp / "report")]
    )
    assert report.exit_code == 0, report.output
    (run,) = (tmp / "results" / SITE_NAME).iterdir()
    return run


@pytest.fixture(scope="module")
def pair_failure(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive of the (node-a, node-b) failure; its report is in ../../../report."""
    return collect_and_report(tmp_path_factory.mktemp("pair"), two_node_pair_ab_slow)


def nodes_of(run: Path) -> dict[str, dict[str, object]]:
    verdicts = json.loads((run / "verdicts.json").read_text())
    return {n["node"]: n for n in verdicts["nodes"]}


@pytest.mark.slow
def test_a_two_node_failure_makes_its_pair_suspect_and_clears_the_rest(pair_failure: Path) -> None:
    nodes = nodes_of(pair_failure)
    assert {n: v["status"] for n, v in nodes.items()} == {
        "node-a": "suspect",
        "node-b": "suspect",
        "node-c": "cleared",
        "node-d": "cleared",
    }
    assert [v["word"] for v in nodes.values()] == ["fail", "fail", "pass", "pass"]
    assert nodes["node-a"]["reasons"] == [
        "only in failing groups of two-node / nccl-all-reduce g0 with node-b: median busbw"
        " 300 GB/s over 3 rounds, needs >= 360 GB/s (written >= 2880 Gb/s)"
    ]
    runs = nodes["node-a"]["runs"]
    assert isinstance(runs, list)
    assert {(r["stage"], r["test"], r["word"]) for r in runs} >= {
        ("single-node", "nccl-all-reduce", "pass"),
        ("two-node", "nccl-all-reduce", "fail"),
        ("two-node", "nccl-all-gather", "pass"),
    }


def test_report_and_summary_name_the_suspects_first(pair_failure: Path) -> None:
    report = pair_failure.parents[2] / "report"
    lines = (report / "summary.md").read_text().splitlines()
    assert lines[0] == "## Readiness of h20-3e-four: ❌ fail"
    assert lines[2] == "**Hold back 2 of 4 nodes: node-a (suspect), node-b (suspect).**"
    html = (report / "index.html").read_text()
    header = html[html.index("<header>") : html.index("</header>")]
    assert (
        'Hold back 2 of 4 nodes: <span class="node">node-a</span> (suspect), '
        '<span class="node">node-b</span> (suspect).'
    ) in header


@pytest.mark.slow
def test_a_node_that_failed_its_single_node_run_is_failed_not_suspect(tmp_path: Path) -> None:
    run = collect_and_report(tmp_path, node_a_slow_alone_too)
    nodes = nodes_of(run)
    assert (nodes["node-a"]["status"], nodes["node-b"]["status"]) == ("failed", "suspect")
    assert nodes["node-a"]["reasons"] == [
        "failed alone in single-node / nccl-all-reduce g0: median busbw 310 GB/s over 3"
        " rounds, needs >= 420 GB/s"
    ]
    lines = (tmp_path / "report" / "summary.md").read_text().splitlines()
    assert lines[2] == "**Hold back 2 of 4 nodes: node-a (failed), node-b (suspect).**"


def retest(run: Path, out: Path) -> str:
    site = run.parents[2] / "site.yaml"  # provenance.json names it relative to collect's cwd
    args = ["retest", str(run), "--out", str(out), "--site", str(site)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_retest_pairs_each_suspect_with_a_cleared_node_and_renders(
    pair_failure: Path, tmp_path: Path
) -> None:
    out = tmp_path / "h20-3e-four-retest.yaml"
    said = retest(pair_failure, out)
    assert (
        said.splitlines()[0] == "retest h20-3e-four-retest: node-a with node-c; node-b with node-d"
    )
    text = out.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schemas/site.v1alpha1.json\n")
    assert "#   node-a (suspect in two-node / nccl-all-reduce) with node-c (cleared)\n" in text
    assert "# Budget of this retest: worst case " in text
    site = yaml.safe_load(text)
    (pool,) = site["spec"]["nodePools"]
    assert pool["nodes"] == ["node-a", "node-c", "node-b", "node-d"]
    (stage,) = site["spec"]["readiness"]["stages"]
    assert (stage["pool"], stage["nodesPerJob"], stage["tests"]) == (
        pool["name"],
        2,
        ["nccl-all-reduce"],
    )
    assert [t["test"] for t in site["spec"]["thresholds"]] == ["nccl-all-reduce"]
    runner = CliRunner()
    assert runner.invoke(main, ["validate", str(out)]).exit_code == 0
    rendered = runner.invoke(main, ["render", str(out), "--out", str(tmp_path / "out")])
    assert rendered.exit_code == 0, rendered.output
    jobs = [
        yaml.safe_load(p.read_text())
        for p in (tmp_path / "out" / "h20-3e-four-retest").rglob("*.yaml")
    ]
    groups = {
        tuple(pinned(job))
        for job in jobs
        if isinstance(job, dict) and job.get("kind") == "TrainJob"
    }
    assert groups == {("node-a", "node-c"), ("node-b", "node-d")}


def pinned(trainjob: dict[str, object]) -> list[str]:
    """The nodes a rendered TrainJob is pinned to (its node affinity's metadata.name)."""
    text = yaml.safe_dump(trainjob)
    found = re.findall(r"- (node-[a-d])\n", text)
    return sorted(dict.fromkeys(found))


@pytest.mark.slow
def test_a_node_failing_alone_needs_no_retest(tmp_path: Path) -> None:
    run = collect_and_report(tmp_path, node_a_slow_alone_too)
    said = retest(run, tmp_path / "retest.yaml").splitlines()
    assert said[0] == "retest h20-3e-four-retest: node-b with node-c"
    assert said[1].startswith("Budget of this retest: worst case 28.8 GPU-hours")
    assert said[2].startswith("node-a failed alone, no retest needed: failed alone in single-node")
    site = yaml.safe_load((tmp_path / "retest.yaml").read_text())
    assert site["spec"]["nodePools"][0]["nodes"] == ["node-b", "node-c"]


@pytest.mark.slow
def test_control_characters_in_a_reason_reach_the_retest_header_escaped(tmp_path: Path) -> None:
    """A failed node's reason (NVCRE's message, untrusted) with an escape and a CR."""

    def hostile(verdicts: dict[str, object]) -> None:
        for node in verdicts["nodes"]:  # type: ignore[attr-defined]
            if node["node"] == "node-a":
                node["reasons"] = ["XID 79\x1b[2J\rspec: {}"]

    (tmp_path / "c").mkdir()
    run = forged(collect_and_report(tmp_path / "c", node_a_slow_alone_too), tmp_path, edit=hostile)
    said = retest(run, tmp_path / "retest.yaml")
    assert "node-a failed alone, no retest needed: XID 79\\x1b[2J\\x0dspec: {}" in said
    text = (tmp_path / "retest.yaml").read_text(encoding="utf-8")
    written = "# No retest: node-a failed alone, no retest needed: XID 79\\x1b[2J\\x0dspec: {}\n"
    assert written in text


def test_retest_writes_no_name_outside_the_plan_into_the_site(
    pair_failure: Path, tmp_path: Path
) -> None:
    """Issue #31: suspect and failed names no pool names are printed, refused, never written."""
    names = ("prod-control-plane-1", "node-a/status")
    run = forged(forged(pair_failure, tmp_path / "s", *names, status="suspect"), tmp_path, "evil")
    out = tmp_path / "retest.yaml"
    said = retest(run, out)
    text = out.read_text(encoding="utf-8")  # not even in the header's comments
    assert not any(name in text for name in (*names, "evil"))
    assert (
        said.splitlines()[0] == "retest h20-3e-four-retest: node-a with node-c; node-b with node-d"
    )
    assert (
        "prod-control-plane-1 (suspect): refused, not retested: prod-control-plane-1 is not" in said
    )
    assert "'node-a/status' is not a node name" in said
    assert "evil (failed): refused, not retested: evil is not a node the site's pools name" in said


def test_retest_refuses_an_existing_file(pair_failure: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken.yaml"
    out.write_text("keep me\n")
    site = pair_failure.parents[2] / "site.yaml"
    args = ["retest", str(pair_failure), "--out", str(out), "--site", str(site)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "exists" in result.stderr
    assert out.read_text() == "keep me\n"
    changed = tmp_path / "changed.yaml"
    changed.write_text(site.read_text() + "# edited\n")
    args = ["retest", str(pair_failure), "--out", str(tmp_path / "x.yaml"), "--site", str(changed)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "is not the site the run was judged against" in result.stderr


def test_retest_refuses_a_link_and_a_full_disk(
    pair_failure: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retest site goes through the one atomic writer (issue #32): NVC758, exit 2."""
    site = pair_failure.parents[2] / "site.yaml"
    link = tmp_path / "link.yaml"
    link.symlink_to(tmp_path / "elsewhere.yaml")
    args = ["retest", str(pair_failure), "--out", str(link), "--site", str(site)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "error[NVC758]" in result.stderr and "is a symbolic link" in result.stderr
    assert not (tmp_path / "elsewhere.yaml").exists()

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    out = tmp_path / "new.yaml"
    args = ["retest", str(pair_failure), "--out", str(out), "--site", str(site)]
    result = CliRunner().invoke(main, args)
    monkeypatch.undo()
    assert result.exit_code == 2
    assert "error[NVC758]" in result.stderr and "(ENOSPC); nothing was written" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml"]


@pytest.mark.slow
def test_finished_at_comes_from_kubectl_timestamps(tmp_path: Path) -> None:
    """Logs saved with `kubectl logs --timestamps`: their last time is when the run ended."""
    site = tmp_path / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    saved = write_logs(tmp_path / "saved", site_text())
    for n, log in enumerate(sorted(saved.rglob("*.log"))):
        stamp = f"2026-10-14T13:{n % 60:02d}:07.123456789Z"
        lines = log.read_text().splitlines()
        log.write_text("".join(f"{stamp} {line}\n" for line in lines))
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp_path / "r")]
    assert CliRunner().invoke(main, args).exit_code == 0
    (run,) = (tmp_path / "r" / SITE_NAME).iterdir()
    summary = json.loads((run / "summary.json").read_text())
    last = min(len(list(saved.rglob("*.log"))) - 1, 59)
    assert summary["finished_at"] == f"2026-10-14T13:{last:02d}:07Z"
    assert summary["verdict"] == "pass"  # the prefix is read through, as ingest reads it


# Issue #31: logs saved into other runs' slots never pass and never clear a node.
SINGLE, PAIR = "single-node-nccl-all-reduce", "two-node-nccl-all-reduce"
DCGM = "single-node-dcgm-l1"
Slot = tuple[str, int, str]  # the run's name prefix (stage-test), round, group (or node)


def slots(saved: Path) -> dict[Slot, Path]:
    """Every saved log by the run it is named after."""
    found = {}
    for log in saved.rglob("*.log"):
        match = re.fullmatch(r"(.*)-[0-9a-f]{8}-r(\d+)-([gn]\d+)\.log", log.name)
        if match is not None:
            found[match[1], int(match[2]), match[3]] = log
    return found


def collect_swapped(
    tmp: Path, busbw: object, moves: list[tuple[Slot, Slot]]
) -> tuple[int, str, dict[str, object]]:
    """Collect the on-call logs after copying each `from` log into the `to` run's slot."""
    site = tmp / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    saved = write_logs(tmp / "saved", site_text(), busbw)  # type: ignore[arg-type]
    found = slots(saved)
    for source, target in moves:
        found[target].write_bytes(found[source].read_bytes())
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp / "results")]
    result = CliRunner().invoke(main, args)
    (run,) = (tmp / "results" / SITE_NAME).iterdir()
    verdicts = json.loads((run / "verdicts.json").read_text())
    return result.exit_code, result.stdout, verdicts


def statuses(verdicts: dict[str, object]) -> dict[str, str]:
    nodes = verdicts["nodes"]
    assert isinstance(nodes, list)
    return {n["node"]: n["status"] for n in nodes}


@pytest.mark.slow
def test_passing_logs_saved_in_the_failing_runs_slots_never_pass(tmp_path: Path) -> None:
    """node-b's logs as node-a's single-node runs, (c, d)'s as (a, b)'s: was pass, all cleared."""
    moves = [((SINGLE, r, "g1"), (SINGLE, r, "g0")) for r in (1, 2, 3)]
    moves += [((PAIR, r, "g1"), (PAIR, r, "g0")) for r in (1, 2, 3)]
    code, out, verdicts = collect_swapped(tmp_path, node_a_slow_alone_too, moves)
    assert (code, verdicts["word"]) == (1, "fail")
    found = statuses(verdicts)
    assert found == {"node-a": "failed", "node-b": "suspect", "node-c": "untested",
                     "node-d": "untested"}  # fmt: skip
    nodes = {n["node"]: n for n in verdicts["nodes"]}  # type: ignore[attr-defined]
    assert nodes["node-a"]["reasons"][0].startswith(
        "failed alone in single-node / nccl-all-reduce g0: NVC730: round 1 (single-node-nccl-all"
    )
    assert (
        "ranks ran on node-b, which the plan does not name for this run (expected node-a)"
        in (nodes["node-a"]["reasons"][0])
    )
    assert nodes["node-c"]["reasons"][0].startswith(
        "incomplete in two-node / nccl-all-reduce g1: NVC740: round 1 (two-node-nccl-all-reduce-"
    )
    lines = out.splitlines()
    assert any(
        line.startswith("evidence   Unbound evidence (NVC740), single-node/nccl-all-reduce g1,")
        and "byte for byte: one log is evidence for one run at most" in line
        for line in lines
    )


@pytest.mark.slow
def test_one_nodes_log_for_every_node_clears_only_that_node_at_most(tmp_path: Path) -> None:
    moves = [((SINGLE, r, "g2"), (SINGLE, r, g)) for r in (1, 2, 3) for g in ("g0", "g1", "g3")]
    code, _, verdicts = collect_swapped(tmp_path, healthy, moves)
    assert (code, verdicts["word"]) == (1, "fail")
    assert statuses(verdicts) == {"node-a": "failed", "node-b": "failed", "node-d": "failed",
                                  "node-c": "untested"}  # fmt: skip
    findings = verdicts["findings"]
    assert isinstance(findings, list)
    copied = [f for f in findings if f["code"] == "NVC740" and f["group"] == "g2"]
    assert len(copied) == 3
    assert re.fullmatch(
        r"the same evidence as g0 round 1 \(\S+-r1-g0\), byte for byte; g1 round 1 \(\S+\),"
        r" byte for byte; g3 round 1 \(\S+\), byte for byte: one log is evidence for one run"
        r" at most",
        copied[0]["message"],
    )


@pytest.mark.slow
def test_round_one_copied_to_rounds_two_and_three_is_incomplete(tmp_path: Path) -> None:
    moves = [((SINGLE, 1, "g3"), (SINGLE, r, "g3")) for r in (2, 3)]
    code, out, verdicts = collect_swapped(tmp_path, healthy, moves)
    assert (code, verdicts["word"]) == (1, "incomplete")
    assert statuses(verdicts) == {"node-d": "untested", "node-a": "cleared", "node-b": "cleared",
                                  "node-c": "cleared"}  # fmt: skip
    first = "evidence   Anomaly (NVC741), single-node/nccl-all-reduce g3, round 1: the same as g3"
    assert out.splitlines()[1].startswith(first)
    assert out.splitlines()[1].endswith("byte for byte: a copied round proves nothing")


@pytest.mark.slow
def test_one_dcgm_log_for_every_slot_clears_no_node(tmp_path: Path) -> None:
    """The reviewer's r5: node-b's round-1 DCGM log copied over all 12 slots was a pass.

    The log names node-b: in the other nodes' slots it is another run's evidence (NVC730,
    they fail, to be retested), in node-b's own three a copied round (NVC741).
    """
    moves = [((DCGM, 1, "n1"), (DCGM, r, n)) for r in (1, 2, 3) for n in ("n0", "n1", "n2", "n3")]
    code, out, verdicts = collect_swapped(tmp_path, healthy, moves)
    assert (code, verdicts["word"]) == (1, "fail")
    assert statuses(verdicts) == {"node-a": "failed", "node-c": "failed", "node-d": "failed",
                                  "node-b": "untested"}  # fmt: skip
    nodes = {n["node"]: n for n in verdicts["nodes"]}  # type: ignore[attr-defined]
    assert len(nodes["node-a"]["reasons"]) == 3  # one a round, each naming node-b
    assert all(
        re.fullmatch(
            r"failed alone in single-node / dcgm-l1 n0: NVC730: logs/nvcre/single-node-dcgm-l1-"
            r"\S+-r\d-n0\.log:1: the log is from node node-b \(pod single-node-dcgm-l1-\S+-r1-n1-"
            r"\w{5}, started \S+\), but the Job is pinned to node-a: another run's evidence",
            reason,
        )
        for reason in nodes["node-a"]["reasons"]
    )
    assert nodes["node-b"]["reasons"][0].startswith(
        "incomplete in single-node / dcgm-l1 n1: NVC741: the same as n1 round"
    )
    findings = [f for f in verdicts["findings"] if f["test"] == "dcgm-l1"]  # type: ignore[attr-defined]
    assert sorted((f["code"], f["nodes"]) for f in findings if f["round"] == 1) == [
        ("NVC730", ["node-a"]), ("NVC730", ["node-c"]), ("NVC730", ["node-d"]),
        ("NVC741", ["node-b"]),
    ]  # fmt: skip
    assert any(
        line.startswith("evidence   Unbound evidence (NVC730), single-node/dcgm-l1 n0, round")
        for line in out.splitlines()
    )


@pytest.mark.slow
def test_healthy_dcgm_logs_of_the_same_length_are_no_copies(tmp_path: Path) -> None:
    """Issue #31's follow-up: every healthy DCGM run of the factory takes 312 s.

    DCGM's JSON names no host and no time, so the logs differ only in their begin lines
    (node, pod, start): no NVC740/741, every node cleared.
    """
    code, _, verdicts = collect_swapped(tmp_path, healthy, [])
    saved = slots(tmp_path / "saved")
    bodies = {p.read_text().split("\n", 1)[1] for k, p in saved.items() if k[0] == DCGM}
    assert len(bodies) == 1  # below the begin line, all 12 logs are the same bytes
    assert (code, verdicts["word"]) == (0, "pass")
    assert set(statuses(verdicts).values()) == {"cleared"}
    assert not [f for f in verdicts["findings"] if f["code"] in {"NVC740", "NVC741", "NVC739"}]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_nodes_dcgm_round_copied_to_its_next_rounds_is_incomplete(tmp_path: Path) -> None:
    moves = [((DCGM, 1, "n2"), (DCGM, r, "n2")) for r in (2, 3)]
    code, out, verdicts = collect_swapped(tmp_path, healthy, moves)
    assert (code, verdicts["word"]) == (1, "incomplete")
    assert statuses(verdicts) == {"node-c": "untested", "node-a": "cleared", "node-b": "cleared",
                                  "node-d": "cleared"}  # fmt: skip
    assert re.match(
        r"evidence   Anomaly \(NVC741\), single-node/dcgm-l1 n2, round 1: the same as n2 round"
        r" [23] \(\S+\), byte for byte; n2 round [23] ",
        out.splitlines()[1],
    )
