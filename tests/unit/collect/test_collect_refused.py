"""NVCRE exports edited to fool a verdict (issue #31): each edit ends incomplete, never pass.

The `lab` state (`labstate.py`) passes as collected; each test edits one thing of it:
a number that is not one, a time that cannot be, another object's owner reference, or
a node's measurements removed. The edited group and run are incomplete, the finding
names the object and field, the node is not cleared, and the counts agree with the word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from labstate import find, lab_state, write_export

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions, CollectOutcome
from nvcregen.collect.output import render_text, summary_line
from nvcregen.core.errors import ExitCode
from nvcregen.results.verdicts import Verdicts, Word

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
NODE_B = "lab-single-node-0001-communication-nccl-all-reduce-node-b-{}-job-bw"
WF_SINGLE = "lab-single-node-0001-communication-nccl-all-reduce"
Obj = dict[str, Any]


def collected(tmp_path: Path, objects: list[Obj]) -> CollectOutcome:
    folder = write_export(tmp_path / "export", objects)
    return collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT, from_dir=folder))


def single_node(outcome: CollectOutcome) -> Any:
    (found,) = [
        v
        for v in outcome.verdicts.thresholds
        if (v.stage, v.test) == ("single-node", "nccl-all-reduce")
    ]
    return found


def nodes(outcome: CollectOutcome) -> dict[str, str]:
    return {n.node: n.status for n in outcome.verdicts.nodes}


def counts_agree(outcome: CollectOutcome) -> None:
    """The summary's counts hold a verdict of the overall word, and no worse one."""
    counts = outcome.verdicts.counts()
    word = str(outcome.verdicts.word)
    assert counts[word] > 0
    worse = {"pass": ("incomplete", "fail"), "incomplete": ("fail",), "fail": ()}[word]
    assert all(counts[w] == 0 for w in worse)
    assert f": {word} (" in summary_line(outcome)


def assert_refused(outcome: CollectOutcome, code: str, text: str) -> None:
    """Incomplete, node-b not cleared, one finding of `code` on node-b's group naming `text`."""
    assert outcome.exit_code is ExitCode.DRIFT
    assert outcome.verdicts.word == "incomplete"
    counts_agree(outcome)
    (finding,) = [f for f in outcome.verdicts.findings if f.code == code]
    assert (finding.stage, finding.test, finding.group) == (
        "single-node",
        "nccl-all-reduce",
        "node-b",
    )
    assert text in finding.message
    assert finding.nodes == ("node-b",)
    verdict = single_node(outcome)
    assert verdict.word == "incomplete"
    (group_b,) = [g for g in verdict.groups if g.group == "node-b"]
    assert group_b.word == "incomplete"
    assert nodes(outcome) == {"node-b": "untested", "node-a": "cleared"}
    (run,) = [r for r in outcome.verdicts.runs if (r.stage, r.test) == finding_run(finding)]
    assert run.word == "incomplete"
    assert code in render_text(outcome).splitlines()[1]  # named first, as evidence


def finding_run(finding: Any) -> tuple[str, str]:
    return finding.stage, finding.test


def test_the_unedited_state_passes_and_clears_both_nodes(tmp_path: Path) -> None:
    outcome = collected(tmp_path, lab_state())
    assert outcome.verdicts.word == "pass"
    assert not outcome.verdicts.findings
    assert nodes(outcome) == {"node-a": "cleared", "node-b": "cleared"}
    counts_agree(outcome)


@pytest.mark.parametrize("bad", ["inf", "nan", "-465.1", "abc", ""])
def test_a_busbw_that_is_no_measurement_is_refused(tmp_path: Path, bad: str) -> None:
    objects = lab_state()
    find(objects, "BandwidthMeasurement", NODE_B.format(2))["status"]["results"][2]["busBW"] = bad
    outcome = collected(tmp_path, objects)
    assert_refused(outcome, "NVC745", f"status.results[2].busBW {bad!r} is not a finite")
    (finding,) = outcome.verdicts.findings
    assert finding.round == 2
    assert finding.source == NODE_B.format(2)
    assert f"BandwidthMeasurement {NODE_B.format(2)}" in finding.message


def test_every_round_of_a_node_refused_leaves_its_group_incomplete(tmp_path: Path) -> None:
    objects = lab_state()
    for i in (1, 2, 3):
        find(objects, "BandwidthMeasurement", NODE_B.format(i))["status"]["results"][2]["busBW"] = (
            "inf"
        )
    outcome = collected(tmp_path, objects)
    assert outcome.verdicts.word == "incomplete"
    assert [f.round for f in outcome.verdicts.findings] == [1, 2, 3]
    (group_b,) = [g for g in single_node(outcome).groups if g.group == "node-b"]
    assert (group_b.word, group_b.final_rounds) == ("incomplete", 0)
    assert nodes(outcome)["node-b"] == "untested"
    counts_agree(outcome)


@pytest.mark.parametrize("key", ["busBW", "samples"])
def test_a_row_missing_a_number_is_refused(tmp_path: Path, key: str) -> None:
    objects = lab_state()
    del find(objects, "BandwidthMeasurement", NODE_B.format(2))["status"]["results"][1][key]
    text = f"status.results[1].{key} is missing or null"
    assert_refused(collected(tmp_path, objects), "NVC745", text)


def test_a_row_of_zero_samples_is_refused(tmp_path: Path) -> None:
    objects = lab_state()
    find(objects, "BandwidthMeasurement", NODE_B.format(2))["status"]["results"][0]["samples"] = 0
    assert_refused(collected(tmp_path, objects), "NVC745", "status.results[0].samples is 0")


def test_one_sample_is_evidence(tmp_path: Path) -> None:
    objects = lab_state()
    find(objects, "BandwidthMeasurement", NODE_B.format(2))["status"]["results"][0]["samples"] = 1
    assert collected(tmp_path, objects).verdicts.word == "pass"


def test_a_node_whose_measurements_were_removed_is_incomplete_not_cleared(
    tmp_path: Path,
) -> None:
    objects = lab_state()
    for i in (1, 2, 3):
        objects.remove(find(objects, "BandwidthMeasurement", NODE_B.format(i)))
    outcome = collected(tmp_path, objects)
    assert_refused(outcome, "NVC748", "no valid measurement of group node-b (node-b)")


def test_a_node_removed_with_its_group_is_incomplete_not_cleared(tmp_path: Path) -> None:
    """The Workflow's group is edited out too: the pool still names the node."""
    objects = lab_state()
    for i in (1, 2, 3):
        objects.remove(find(objects, "BandwidthMeasurement", NODE_B.format(i)))
    orchestration = find(objects, "Workflow", WF_SINGLE)["status"]["orchestration"]
    orchestration["groups"] = [g for g in orchestration["groups"] if g["name"] != "node-b"]
    for past in orchestration["iterationHistory"]:
        past["groups"] = [g for g in past["groups"] if g["name"] != "node-b"]
    outcome = collected(tmp_path, objects)
    assert outcome.verdicts.word == "incomplete"
    counts_agree(outcome)
    (finding,) = outcome.verdicts.findings
    assert (finding.code, finding.group, finding.nodes) == ("NVC748", "", ("node-b",))
    assert finding.message == "node node-b of pool h20 is in no measured group"
    assert nodes(outcome) == {"node-b": "untested", "node-a": "cleared"}


def test_an_excluded_node_is_not_missing(tmp_path: Path) -> None:
    objects = lab_state()
    for i in (1, 2, 3):
        objects.remove(find(objects, "BandwidthMeasurement", NODE_B.format(i)))
    orchestration = find(objects, "Workflow", WF_SINGLE)["status"]["orchestration"]
    orchestration["groups"] = [g for g in orchestration["groups"] if g["name"] != "node-b"]
    for past in orchestration["iterationHistory"]:
        past["groups"] = [g for g in past["groups"] if g["name"] != "node-b"]
    orchestration["excludedNodes"] = ["node-b"]
    outcome = collected(tmp_path, objects)
    assert not [f for f in outcome.verdicts.findings if f.code == "NVC748"]
    assert nodes(outcome)["node-b"] == "excluded"


def edit_times(objects: list[Obj], start: str | None, end: str | None) -> None:
    status = find(objects, "BandwidthMeasurement", NODE_B.format(2))["status"]
    if start is not None:
        status["startTime"] = start
    if end is not None:
        status["completionTime"] = end


@pytest.mark.parametrize(
    ("start", "end", "text"),
    [
        (
            None,
            "2026-10-14T10:59:59Z",
            "status.completionTime 2026-10-14T10:59:59Z is before status.startTime",
        ),
        (
            "2026-10-14T07:59:59Z",
            "2026-10-14T08:30:00Z",
            "status.startTime 2026-10-14T07:59:59Z is before the run was created"
            " (2026-10-14T08:00:00Z)",
        ),
        (
            None,
            "2099-01-01T00:00:00Z",
            "status.completionTime 2099-01-01T00:00:00Z is after the collection",
        ),
        (None, "yesterday", "status.completionTime 'yesterday' is not an RFC 3339 time"),
    ],
)
def test_a_measurement_whose_times_cannot_be_is_refused(
    tmp_path: Path, start: str | None, end: str | None, text: str
) -> None:
    objects = lab_state()
    edit_times(objects, start, end)
    assert_refused(collected(tmp_path, objects), "NVC746", text)


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-10-14T11:00:00Z", "2026-10-14T11:00:00Z"),  # done within the second
        ("2026-10-14T08:00:00Z", "2026-10-14T08:05:00Z"),  # started as the run was created
    ],
)
def test_times_at_the_boundaries_are_evidence(tmp_path: Path, start: str, end: str) -> None:
    objects = lab_state()
    edit_times(objects, start, end)
    assert collected(tmp_path, objects).verdicts.word == "pass"


def test_a_completion_at_the_collection_time_is_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = lab_state()
    edit_times(objects, None, "2026-10-14T13:00:00Z")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1791982800")  # 2026-10-14T13:00:00Z
    assert collected(tmp_path, objects).verdicts.word == "pass"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1791982799")  # one second earlier
    outcome = collected(tmp_path / "earlier", objects)
    assert [f.code for f in outcome.verdicts.findings] == ["NVC746"]


def test_an_owner_reference_to_another_sites_workflow_is_refused(tmp_path: Path) -> None:
    objects = lab_state()
    other = find(objects, "Workflow", "other-site-0009-communication-nccl-all-reduce")
    measurement = find(objects, "BandwidthMeasurement", NODE_B.format(2))
    measurement["metadata"]["ownerReferences"][0].update(
        name=other["metadata"]["name"], uid=other["metadata"]["uid"]
    )
    assert_refused(
        collected(tmp_path, objects),
        "NVC747",
        "metadata.ownerReferences names uid-wf-9, not the run's Workflow (uid-wf-1)",
    )


def test_a_problem_of_no_run_is_counted_as_incomplete() -> None:
    """What belongs to no run (a refusal of a superseded run) is counted, as the word is."""
    verdicts = Verdicts(word=Word.INCOMPLETE, problems=("NVC745: BandwidthMeasurement x: y",))
    assert verdicts.counts() == {"pass": 0, "incomplete": 1, "fail": 0}


def test_a_workflow_of_another_sites_certification_is_refused(tmp_path: Path) -> None:
    """The Certification's status names another site's Workflow: none of its rounds counts."""
    objects = lab_state()
    single = find(objects, "Certification", "lab-single-node-0001")
    other = "other-site-0009-communication-nccl-all-reduce"
    single["status"]["categoryStatuses"][0]["workflowRef"]["name"] = other
    outcome = collected(tmp_path, objects)
    assert outcome.verdicts.word == "incomplete"
    counts_agree(outcome)
    (refusal,) = [f for f in outcome.verdicts.findings if f.code == "NVC747"]
    assert refusal.message.endswith(
        f"its Workflow {other} is owned by uid-cert-9, not by this run's Certification"
        " (uid-cert-1), refused as evidence"
    )
    missing = [f.nodes for f in outcome.verdicts.findings if f.code == "NVC748"]
    assert missing == [("node-a",), ("node-b",)]
    assert single_node(outcome).word == "incomplete"
    assert nodes(outcome)["node-a"] == nodes(outcome)["node-b"] == "untested"
