"""Issue #33: a packed run's log read back as one run per test, node and pair.

Logs are written as the packed runs print them (`packfactory.py`), for a packed copy of
the shipped trainer-mode site and of the four-node on-call site; each test changes one
section (or the log around it) and reads the verdicts and the finding's code and place.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from oncallfactory import site_text
from packfactory import (
    PackLog,
    failed,
    launcher_log,
    packed,
    pod_log,
    section,
    write_packed_logs,
)
from trainerfactory import example_text

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions, CollectOutcome
from nvcregen.core.errors import ExitCode
from nvcregen.emit.canonical import dump_yaml
from nvcregen.plan.packs import chunk_of
from nvcregen.results.logplace import PackPlaced, place
from nvcregen.results.packlogs import sections

ROOT = Path(__file__).resolve().parents[3]
SITE = "h20-3e-four"
REDUCE = "nccl-all-reduce"


def collected(tmp: Path, edit: Any = None, text: str = "") -> CollectOutcome:
    text = text or packed(site_text())
    tmp.mkdir(parents=True, exist_ok=True)
    site = tmp / "site.yaml"
    site.write_text(text, encoding="utf-8")
    write_packed_logs(tmp / "saved", text, edit=edit)
    return collect(CollectOptions(str(site), tmp / "results", ROOT, from_dir=tmp / "saved"))


def statuses(outcome: CollectOutcome) -> dict[str, str]:
    return {n.node: str(n.status) for n in outcome.verdicts.nodes}


def findings(outcome: CollectOutcome, code: str) -> list[Any]:
    return [f for f in outcome.verdicts.findings if f.code == code]


def test_the_shipped_trainer_site_packed_with_passing_logs_passes(tmp_path: Path) -> None:
    outcome = collected(tmp_path, text=packed(example_text()))
    assert outcome.exit_code is ExitCode.OK
    assert str(outcome.verdicts.word) == "pass"
    assert statuses(outcome) == {"node-a": "cleared", "node-b": "cleared"}
    assert [f for f in outcome.verdicts.findings if str(f.word) != "pass"] == []
    summary = json.loads((outcome.archive.path / "summary.json").read_text())
    assert len(summary["logs"]) == 3 * (2 * 5 + 1 * 4)  # every test of every node and pair


def test_a_failed_section_fails_that_test_on_that_node_only(tmp_path: Path) -> None:
    """rc=1 of node-b's dcgm-l2 in round 2: its node fails that level; nothing else does."""
    outcome = collected(
        tmp_path, lambda logs: failed(pod_log(logs, "dcgm-l2", 2, "node-b"), "dcgm-l2")
    )
    assert outcome.exit_code is ExitCode.DRIFT
    assert statuses(outcome) == {"node-a": "cleared", "node-b": "failed", "node-c": "cleared",
                                 "node-d": "cleared"}  # fmt: skip
    words = {(r.stage, r.test): str(r.word) for r in outcome.verdicts.runs}
    assert words[("single-node", "dcgm-l2")] == "fail"
    assert words[("single-node", "dcgm-l1")] == "pass"  # the same pod's other section
    (node,) = [n for n in outcome.verdicts.nodes if n.node == "node-b"]
    assert any("dcgm-l2" in reason for reason in node.reasons)
    assert not any("dcgm-l1" in reason for reason in node.reasons)


def test_a_packed_jobs_failed_condition_fails_no_test_by_itself(tmp_path: Path) -> None:
    """The Indexed Job ends Failed when any node failed: the sections decide, not it."""
    text = packed(site_text())
    saved = write_packed_logs(tmp_path / "saved", text)
    listing = yaml.safe_load((saved / "objects.yaml").read_text())
    condition = {"type": "Failed", "status": "True", "lastTransitionTime": "2026-12-03T20:00:00Z"}
    jobs = [o for o in listing["items"] if o["kind"] == "Job"]
    for job in jobs:
        job["status"] = {"conditions": [condition]}
    (saved / "objects.yaml").write_text(dump_yaml(listing))
    (tmp_path / "site.yaml").write_text(text)
    site = str(tmp_path / "site.yaml")
    outcome = collect(CollectOptions(site, tmp_path / "r", ROOT, from_dir=saved))
    # both node packs' Jobs in every round, in chunks of maxConcurrentJobs (2) of 4 nodes
    assert len(jobs) == 12
    assert str(outcome.verdicts.word) == "pass"
    assert set(statuses(outcome).values()) == {"cleared"}


@pytest.mark.slow
def test_a_section_that_never_ends_is_incomplete_never_cleared(tmp_path: Path) -> None:
    def cut(logs: list[PackLog]) -> None:
        log = pod_log(logs, REDUCE, 3, "node-c")
        log.sections[section(log, REDUCE)] = replace(log.sections[0], rc=None)  # type: ignore[arg-type]

    outcome = collected(tmp_path, cut)
    assert str(outcome.verdicts.word) == "incomplete"
    assert statuses(outcome)["node-c"] == "untested"
    (found,) = findings(outcome, "NVC743")
    assert (found.group, found.round, found.nodes) == ("g2", 3, ("node-c",))
    assert found.message.endswith(".log:1: the section of nccl-all-reduce never ends (no"
                                  " `@@nvcregen-pack end` line)")  # fmt: skip


def test_sections_twice_out_of_order_or_of_another_test_are_refused(tmp_path: Path) -> None:
    def garble(logs: list[PackLog]) -> None:
        twice = pod_log(logs, REDUCE, 1, "node-a")
        twice.sections.append(twice.sections[section(twice, REDUCE)])
        swapped = pod_log(logs, REDUCE, 2, "node-b")
        swapped.sections.reverse()  # alltoall, all-gather, all-reduce
        other = pod_log(logs, "dcgm-l1", 3, "node-c")
        other.sections.append(replace(other.sections[0], test="dcgm-l3"))

    outcome = collected(tmp_path, garble)
    assert str(outcome.verdicts.word) == "incomplete"
    refused = {(f.test, f.group, f.round) for f in findings(outcome, "NVC744")}
    assert refused == {
        (REDUCE, "g0", 1),  # both sections of the test named twice
        ("nccl-all-gather", "g1", 2),
        (REDUCE, "g1", 2),  # each after alltoall, which runs after them
    }
    assert statuses(outcome) == {"node-a": "untested", "node-b": "untested", "node-c": "cleared",
                                 "node-d": "cleared"}  # fmt: skip
    problems = [p for p in outcome.verdicts.problems if "NVC744" in p]
    assert (
        len(problems) == 1
        and "a section of dcgm-l3, which single-node pack-0 does not run" in (problems[0])
    )
    (twice, *_) = [f for f in findings(outcome, "NVC744") if f.round == 1]
    assert "a second section of nccl-all-reduce in one log: neither is read" in twice.message


def test_two_pod_logs_of_one_job_on_one_node_are_neither_read(tmp_path: Path) -> None:
    def doubled(logs: list[PackLog]) -> None:
        mine = pod_log(logs, "dcgm-l1", 1, "node-a")
        theirs = pod_log(logs, "dcgm-l1", 1, "node-b")
        theirs.sections[:] = [
            replace(s, pod=theirs.path.stem, node="node-a") for s in mine.sections
        ]

    outcome = collected(tmp_path, doubled)
    found = findings(outcome, "NVC752")
    assert {(f.test, f.nodes, f.round) for f in found} == {
        ("dcgm-l1", ("node-a",), 1), ("dcgm-l2", ("node-a",), 1)}  # fmt: skip
    assert "both ran on node-a: neither is read as its evidence" in found[0].message
    assert statuses(outcome)["node-a"] == "untested"
    assert statuses(outcome)["node-b"] == "untested"  # its pod logged no section of its own
    (node_b,) = [n for n in outcome.verdicts.nodes if n.node == "node-b"]
    assert "not judged in single-node / dcgm-l1: no log of round 1" in node_b.reasons
    assert str(outcome.verdicts.word) == "incomplete"


def test_nccl_ranks_in_another_pod_of_the_same_job_are_another_runs_evidence(
    tmp_path: Path,
) -> None:
    def borrowed(logs: list[PackLog]) -> None:
        mine = pod_log(logs, REDUCE, 1, "node-a")
        theirs = pod_log(logs, REDUCE, 1, "node-b")
        i = section(mine, REDUCE)
        body = theirs.sections[i].body  # node-b's numbers, its pod the ranks' host
        mine.sections[i] = replace(mine.sections[i], body=body)

    outcome = collected(tmp_path, borrowed)
    (found,) = findings(outcome, "NVC751")
    assert (found.group, found.round, str(found.word)) == ("g0", 1, "fail")
    assert "ranks of its section ran on single-node-pack-1-" in found.message
    path, line = found.message.split(":")[:2]
    begin = (outcome.archive.path / path).read_text().splitlines()[int(line) - 1]
    assert begin.startswith("@@nvcregen-pack begin test=nccl-all-reduce node=node-a pod=")
    assert statuses(outcome)["node-a"] == "failed"
    assert statuses(outcome)["node-b"] == "cleared"


def test_markers_under_kubectl_timestamps_are_read(tmp_path: Path) -> None:
    text = packed(site_text())
    saved = write_packed_logs(tmp_path / "saved", text)
    for n, log in enumerate(sorted(saved.rglob("*.log"))):
        stamp = f"2026-10-14T13:{n % 60:02d}:07.123456789Z"
        lines = log.read_text().splitlines()
        log.write_text("".join(f"{stamp} {line}\n" for line in lines))
    (tmp_path / "site.yaml").write_text(text)
    outcome = collect(
        CollectOptions(str(tmp_path / "site.yaml"), tmp_path / "r", ROOT, from_dir=saved)
    )
    assert str(outcome.verdicts.word) == "pass"
    assert outcome.verdicts.problems == ()


def test_marker_lines_that_do_not_read_are_named_with_their_line() -> None:
    text = (
        "@@nvcregen-pack begin test=a start=2026-12-03T10:00:00Z\nx\n"
        "@@nvcregen-pack end test=b rc=0\n"
        "@@nvcregen-pack begin test=B node=n pod=p start=now\n"
        "@@nvcregen-pack begin test=c start=2026-12-03T10:00:00Z\n"
        "@@nvcregen-pack end test=c rc=0\n"
        "@@nvcregen-pack end test=c rc=0\n"
    )
    found, wrong = sections(text)
    assert [(s.test, s.line, s.rc, s.text) for s in found] == [
        ("a", 1, None, "x\n"),
        ("c", 5, 0, ""),
    ]
    assert wrong == [
        (3, "an end line of b without its begin line"),
        (4, "an unreadable @@nvcregen-pack line (no test, node, pod, time or rc)"),
        (7, "an end line of c without its begin line"),
    ]


def test_placing_a_pack_by_its_name_and_its_chunk() -> None:
    from sitefactory import catalog, parse

    from nvcregen.plan.packs import packs_of
    from nvcregen.plan.resolve import plan

    site, _ = parse(packed(site_text()))
    units = plan(site, catalog())
    packs = packs_of(units, "packed")
    job = "single-node-pack-1-0123abcd-r2-c0"
    where = place(SITE, units, f"{job}-3-abcde", {}, packs)
    assert isinstance(where, PackPlaced)
    assert (where.pack.name, where.run, where.round, where.index) == ("pack-1", job, 2, 0)
    assert where.nodes == ("node-a", "node-b", "node-c", "node-d")
    assert place(SITE, units, "single-node-pack-1-0123abcd-r2-c1", {}, packs) == (
        "single-node-pack-1-0123abcd-r2-c1: single-node pack-1 has no chunk 1"
    )
    assert "-c for a node pack" in str(
        place(SITE, units, "single-node-pack-1-0123abcd-r2-g0", {}, packs)
    )
    group = place(SITE, units, f"{SITE}-two-node-pack-0-0123abcd-r1-g1-launcher-0-0-x", {}, packs)
    assert isinstance(group, PackPlaced) and group.nodes == ("node-c", "node-d")
    assert "no pack of this site" in str(place(SITE, units, job, {}, []))


@pytest.mark.parametrize("node", ["node-b", "node-z"])
def test_a_pod_the_api_placed_elsewhere_is_no_evidence(tmp_path: Path, node: str) -> None:
    """From a cluster: node-a's pod log, but the API says the pod ran on `node`."""
    from sitefactory import catalog, parse

    from nvcregen.plan.resolve import plan
    from nvcregen.results.logrecords import RunLog
    from nvcregen.results.logruns import assemble_log_runs

    text = packed(site_text())
    saved = write_packed_logs(tmp_path / "saved", text)
    site, _ = parse(text)
    units = plan(site, catalog())
    logs = [
        RunLog("nvcre", p.stem, p.read_bytes(), "node-a" if "-c0-0-" in p.name else "")
        for p in sorted((saved / "logs" / "nvcre").glob("*.log"))
    ]
    target = next(
        i for i, log in enumerate(logs) if "pack-0" in log.name and "-r1-c0-0-" in log.name
    )
    logs[target] = replace(logs[target], node=node)
    logs = [log for log in logs if not ("pack-0" in log.name and "-r1-c0-1-" in log.name)]
    results = assemble_log_runs(SITE, units, 3, logs, [], "packed", chunk_of(site))
    if node == "node-z":  # not in the chunk: none of its sections is read
        (problem,) = results.runs.problems
        assert problem.startswith(
            f"NVC751: logs/nvcre/{logs[target].name}.log: its pod ran on node-z"
        )
        return
    refused = [r for r in results.records if r.status == "refused"]
    assert {(r.test, r.nodes, r.round) for r in refused} == {
        ("dcgm-l1", ("node-b",), 1), ("dcgm-l2", ("node-b",), 1)}  # fmt: skip
    assert all(
        r.errors[0].startswith("NVC751: ")
        and "is from node node-a (pod single-node-pack-0-" in r.errors[0]
        and r.errors[0].endswith("but the API scheduled its pod on node-b: another run's evidence")
        for r in refused
    )


def test_from_a_cluster_every_pod_of_a_packed_job_is_read_with_its_node(tmp_path: Path) -> None:
    """The shipped site packed, served by `fakelist`: each Indexed Job's pods, old and new."""
    from fakelist import serve, write_kubeconfig
    from test_collect_trainer_cluster import FAST

    text = packed(example_text())
    (tmp_path / "site.yaml").write_text(text)
    saved = write_packed_logs(tmp_path / "saved", text)
    listing = yaml.safe_load((saved / "objects.yaml").read_text())["items"]
    objects, logs = list(listing), {}
    for path in sorted((saved / "logs" / "nvcre").glob("*.log")):
        run = next(o for o in listing if path.stem.startswith(o["metadata"]["name"] + "-"))
        name = run["metadata"]["name"]
        labels = {"nvcregen.io/site": "h20-3e-trainer"}
        if run["kind"] == "Job":
            index = path.stem.removeprefix(f"{name}-").split("-")[0]
            labels |= {"batch.kubernetes.io/job-name": name,
                       "batch.kubernetes.io/job-completion-index": index}  # fmt: skip
            node, container = ("node-a", "node-b")[int(index)], "tests"
            old = {**labels}  # a first pod of the same index that was replaced: never read
            meta = {"name": f"{name}-{index}-older", "namespace": "nvcre", "labels": old,
                    "creationTimestamp": "2026-01-01T00:00:00Z"}  # fmt: skip
            objects.append({"kind": "Pod", "metadata": meta, "spec": {"nodeName": node}})
        else:
            labels |= {"jobset.sigs.k8s.io/jobset-name": name,
                       "jobset.sigs.k8s.io/replicatedjob-name": "launcher"}  # fmt: skip
            node, container = "node-a", "node"
        meta = {"name": path.stem, "namespace": "nvcre", "labels": labels,
                "creationTimestamp": "2026-01-02T00:00:00Z"}  # fmt: skip
        objects.append({"kind": "Pod", "metadata": meta, "spec": {"nodeName": node}})
        logs[("nvcre", path.stem, container)] = path.read_bytes()
    with serve(objects) as server:
        server.logs = logs
        options = CollectOptions(
            str(tmp_path / "site.yaml"), tmp_path / "results", ROOT, context="lab",
            kubeconfig=write_kubeconfig(tmp_path / "kubeconfig", server.url), policy=FAST,
            sleep=lambda _: None,
        )  # fmt: skip
        outcome = collect(options)
        reads = [r.path for r in server.received if r.path.endswith("/log")]
    assert str(outcome.verdicts.word) == "pass"
    assert len(reads) == len(logs) == 3 * (2 * 2 + 1)  # every pod of a node pack, a launcher
    assert not any("-older" in r for r in reads)
    summary = json.loads((outcome.archive.path / "summary.json").read_text())
    nodes = {(r["test"], r["round"], r["nodes"][0], r["pod_node"]) for r in summary["logs"]
             if r["stage"] == "single-node"}  # fmt: skip
    assert all(planned == scheduled for _, _, planned, scheduled in nodes)
    assert len(nodes) == 3 * 2 * 5


def test_a_pod_log_saved_under_another_pods_name_is_no_ones_evidence(tmp_path: Path) -> None:
    """node-b's round-2 NCCL pod log saved as node-a's: none of its sections names node-a's pod."""

    def saved_as(logs: list[PackLog]) -> None:
        mine, theirs = pod_log(logs, REDUCE, 2, "node-a"), pod_log(logs, REDUCE, 2, "node-b")
        mine.sections[:] = list(theirs.sections)

    outcome = collected(tmp_path, saved_as)
    (problem,) = [p for p in outcome.verdicts.problems if "NVC751" in p]
    assert re.fullmatch(
        r"NVC751: logs/nvcre/(single-node-pack-1-\w{8}-r2-c0-0-\w{5})\.log: no node is named by"
        r" this pod's \(\1\) own sections: none of its sections is read",
        problem,
    )
    assert str(outcome.verdicts.word) == "incomplete"
    assert statuses(outcome)["node-a"] == "untested"  # its round 2 is missing
    assert statuses(outcome)["node-b"] == "cleared"  # its own log is its own


def test_a_section_with_no_figure_is_unmeasured_as_a_run_of_its_own(tmp_path: Path) -> None:
    """node-c's round-2 all-gather printed N/A for every out-of-place bandwidth (NVC742)."""

    def unmeasured(logs: list[PackLog]) -> None:
        log = pod_log(logs, "nccl-all-gather", 2, "node-c")
        i = section(log, "nccl-all-gather")
        rows = []
        for line in log.sections[i].body.splitlines(keepends=True):
            cells = line.split()
            row = len(cells) == 13 and cells[0].isdigit()
            rows.append(
                "  " + "  ".join([*cells[:6], "N/A", "N/A", *cells[8:]]) + "\n" if row else line
            )
        log.sections[i] = replace(log.sections[i], body="".join(rows))

    outcome = collected(tmp_path, unmeasured)
    found = findings(outcome, "NVC742")
    assert [(f.test, f.group, f.round) for f in found] == [("nccl-all-gather", "g2", 2)]
    assert statuses(outcome)["node-c"] == "untested"
    assert str(outcome.verdicts.word) == "incomplete"


def test_without_exported_objects_the_names_place_every_section(tmp_path: Path) -> None:
    text = packed(site_text())
    saved = write_packed_logs(tmp_path / "saved", text)
    (saved / "objects.yaml").unlink()
    (tmp_path / "site.yaml").write_text(text)
    site = str(tmp_path / "site.yaml")
    outcome = collect(CollectOptions(site, tmp_path / "r", ROOT, from_dir=saved))
    assert str(outcome.verdicts.word) == "pass"
    assert outcome.verdicts.problems == ()


def test_a_section_naming_a_node_outside_its_chunk_is_another_runs_evidence(
    tmp_path: Path,
) -> None:
    def elsewhere(logs: list[PackLog]) -> None:
        log = pod_log(logs, "dcgm-l2", 1, "node-d")
        i = section(log, "dcgm-l2")
        log.sections[i] = replace(log.sections[i], node="gpu-0042")

    outcome = collected(tmp_path, elsewhere)
    (found,) = findings(outcome, "NVC751")
    assert (found.test, found.group, found.round, found.nodes) == ("dcgm-l2", "n3", 1, ("node-d",))
    assert "is from node gpu-0042" in found.message
    assert statuses(outcome)["node-d"] == "failed"
    assert "gpu-0042" not in statuses(outcome)


def test_a_pods_own_sections_naming_two_nodes_name_none(tmp_path: Path) -> None:
    """node-d's DCGM pod log: its dcgm-l2 section says node-c, with node-d's own pod name."""

    def split_vote(logs: list[PackLog]) -> None:
        log = pod_log(logs, "dcgm-l2", 1, "node-d")
        i = section(log, "dcgm-l2")
        log.sections[i] = replace(log.sections[i], node="node-c")

    outcome = collected(tmp_path, split_vote)
    (problem,) = [p for p in outcome.verdicts.problems if "NVC751" in p]
    assert problem.endswith(
        "own sections name no one node (node-c, node-d): none of its sections is read"
    )
    assert statuses(outcome)["node-d"] == "untested"  # its round 1 of both levels is missing
    assert str(outcome.verdicts.word) == "incomplete"


def test_a_dcgm_section_naming_another_node_inside_is_named_at_its_line(tmp_path: Path) -> None:
    """node-a's dcgm-l2 section in round 1: the pack's line says node-a, DCGM's node-b."""

    def inner(logs: list[PackLog]) -> None:
        log = pod_log(logs, "dcgm-l2", 1, "node-a")
        i = section(log, "dcgm-l2")
        body = log.sections[i].body.replace("node=node-a", "node=node-b", 1)
        log.sections[i] = replace(log.sections[i], body=body)

    outcome = collected(tmp_path, inner)
    (found,) = findings(outcome, "NVC730")
    path = found.message.split(":")[0]
    lines = (outcome.archive.path / path).read_text().splitlines()
    line = int(found.message.split(":")[1])
    assert lines[line - 1].startswith("@@nvcregen-dcgm begin node=node-b pod=single-node-pack-0-")
    assert line > 100  # the second section's, counted in the pod's log
    assert (found.test, found.group, found.round) == ("dcgm-l2", "n0", 1)
    assert statuses(outcome)["node-a"] == "failed"


def test_a_failed_section_of_a_pairs_launcher_fails_that_test_on_that_pair_only(
    tmp_path: Path,
) -> None:
    outcome = collected(tmp_path, lambda logs: failed(launcher_log(logs, 2, 1), "nccl-all-gather"))
    assert outcome.exit_code is ExitCode.DRIFT
    assert statuses(outcome) == {"node-a": "cleared", "node-b": "cleared", "node-c": "suspect",
                                 "node-d": "suspect"}  # fmt: skip
    words = {(r.stage, r.test): str(r.word) for r in outcome.verdicts.runs}
    assert words[("two-node", "nccl-all-gather")] == "fail"
    assert words[("two-node", "nccl-all-reduce")] == "pass"  # the same launcher's other test
    (node,) = [n for n in outcome.verdicts.nodes if n.node == "node-c"]
    assert node.reasons == ("only in failing groups of two-node / nccl-all-gather g1 with node-d:"
                            " round 2: JobFailed",)  # fmt: skip


def test_a_packs_runs_and_slots_are_worked_out_once_for_all_its_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: each section looked its node up in its pack's slots (node groups rebuilt,
    then searched: sections x slots); each log rebuilt its pack's chunks. Now once a pack
    (and once a test for what is expected of it): as many for one round's logs as for 3."""
    from sitefactory import catalog, parse

    from nvcregen.plan.packs import Pack
    from nvcregen.plan.resolve import plan
    from nvcregen.plan.rungroups import node_groups
    from nvcregen.results import logplace, packlogs
    from nvcregen.results.logrecords import RunLog
    from nvcregen.results.logruns import LogResults, assemble_log_runs

    text = packed(site_text())
    saved = write_packed_logs(tmp_path / "saved", text)
    site, _ = parse(text)
    units = plan(site, catalog())
    logs = [RunLog("nvcre", p.stem, p.read_bytes()) for p in (saved / "logs" / "nvcre").glob("*")]
    assert len(logs) == 3 * (2 * 4 + 2)  # a round: two node packs of four pods, two pairs
    first = [log for log in logs if "-r1-" in log.name]
    before = assemble_log_runs(SITE, units, 3, logs, [], "packed", chunk_of(site))
    calls: list[str] = []
    chunks, groups = Pack.chunks, node_groups

    def counted_chunks(pack: Pack) -> list[tuple[str, ...]]:
        calls.append(f"chunks {pack.name}")
        return chunks(pack)

    def counted_groups(unit: Any) -> list[tuple[str, ...]]:
        calls.append(f"groups {unit.stage.name} {unit.test.name}")
        return groups(unit)

    monkeypatch.setattr(Pack, "chunks", counted_chunks)
    for module in (logplace, packlogs):
        monkeypatch.setattr(module, "node_groups", counted_groups, raising=False)

    def counted(read: list[RunLog]) -> tuple[LogResults, list[str]]:
        calls.clear()
        found = assemble_log_runs(SITE, units, 3, read, [], "packed", chunk_of(site))
        return found, sorted(calls)

    after, every_round = counted(logs)
    assert after == before  # the same runs, records and problems
    _, one_round = counted(first)
    assert every_round == one_round
    assert every_round.count("chunks pack-1") == 1  # the NCCL node pack's chunks, once


def test_one_named_takes_the_exact_prefix_else_a_cut_one_and_never_two() -> None:
    """The one lookup of a run name's prefix, for tests (`_by_name`) and packs alike."""
    from nvcregen.results.logplace import one_named

    named = [("a", ("st-nccl-all", "site-st-nccl-all")), ("b", ("st-nccl-all-reduce", "x"))]
    assert one_named("st-nccl-all", named) == "a"  # exact beats the cut `st-nccl-all-reduce`
    assert one_named("site-st-nccl-all", named) == "a"
    assert one_named("st-nccl-all-red", named) is None  # a cut ends at a `-` only
    assert one_named("st-nccl", named) is None  # cuts both: names neither
    assert one_named("st-nccl-all-reduce", named) == "b"
    assert one_named("st", [("c", ("st-x", "s-st-x"))]) == "c"  # cut, one item
    assert one_named("zz", named) is None


def test_each_log_is_hashed_once_for_the_run_id_provenance_and_sha256sums(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: collect hashed every log for the run id twice, then for provenance.json and
    SHA256SUMS; one sha256 a log now serves all four (the archive's bytes are the same:
    SHA256SUMS and provenance.json list that sha256)."""
    import hashlib
    from collections import Counter

    text = packed(site_text())
    (tmp_path / "site.yaml").write_text(text, encoding="utf-8")
    saved = write_packed_logs(tmp_path / "saved", text)
    logs = {p.read_bytes() for p in (saved / "logs").rglob("*.log")}
    hashed: Counter[bytes] = Counter()
    real = hashlib.sha256

    def counted(data: bytes = b"", **kwargs: Any) -> Any:
        if data in logs:
            hashed[data] += 1
        return real(data, **kwargs)

    monkeypatch.setattr(hashlib, "sha256", counted)
    site = str(tmp_path / "site.yaml")
    outcome = collect(CollectOptions(site, tmp_path / "r", ROOT, from_dir=saved))
    monkeypatch.undo()
    assert str(outcome.verdicts.word) == "pass"
    assert set(hashed) == logs
    assert set(hashed.values()) == {1}
    sums = (outcome.archive.path / "SHA256SUMS").read_text()
    provenance = json.loads((outcome.archive.path / "provenance.json").read_text())
    for entry in provenance["logs"]:
        data = (outcome.archive.path / entry["path"]).read_bytes()
        assert entry["sha256"] == real(data).hexdigest()
        assert f"{entry['sha256']}  {entry['path']}\n" in sums
