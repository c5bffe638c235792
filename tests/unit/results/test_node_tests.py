"""A node's word on each test of one run (`results/nodetests.py`), and the tests a site's
plan runs on a node (`results/planned.py`): what the release gate asks of a run."""

from __future__ import annotations

from nvcregen.results.nodes import NodeRun
from nvcregen.results.nodetests import failing_tests, words_by_test
from nvcregen.results.planned import periodic_stages, planned_tests
from nvcregen.results.words import Word

A = "node-a"


def group(word: str, *nodes: str, test: str = "burn-in", code: str = "") -> NodeRun:
    return NodeRun(stage="burn", test=test, nodes=nodes or (A,), word=Word(word), code=code)


def word(*groups: NodeRun) -> Word:
    return words_by_test(A, groups)[("burn", "burn-in")]


def test_failed_alone_fails_whatever_else_passed() -> None:
    assert word(group("fail")) is Word.FAIL
    assert word(group("pass"), group("fail")) is Word.FAIL
    assert word(group("pass", A, "node-b"), group("fail")) is Word.FAIL


def test_a_failing_group_of_several_nodes_fails_only_when_no_group_passed() -> None:
    assert word(group("fail", A, "node-b")) is Word.FAIL  # suspect
    assert word(group("fail", A, "node-b"), group("pass", A, "node-c")) is Word.PASS


def test_a_pass_needs_a_passing_group_that_holds_the_node() -> None:
    assert word(group("pass")) is Word.PASS
    assert word(group("pass", "node-b")) is Word.INCOMPLETE  # a group without node-a
    assert word(group("incomplete")) is Word.INCOMPLETE
    assert word(group("incomplete", A, "node-b")) is Word.INCOMPLETE


def test_a_check_of_the_node_not_judged_or_evidence_refused_keeps_a_pass_from_counting() -> None:
    assert word(group("pass"), group("incomplete")) is Word.INCOMPLETE  # alone: not judged
    assert word(group("pass", A, "node-b"), group("incomplete", A, "node-c")) is Word.PASS
    refused = group("incomplete", A, "node-c", code="NVC748")
    assert word(group("pass", A, "node-b"), refused) is Word.INCOMPLETE
    assert word(group("pass"), group("fail", A, "node-b", code="NVC745")) is Word.INCOMPLETE


def test_each_test_by_its_stage_and_name() -> None:
    runs = (
        group("fail"),
        group("pass", test="link-counters"),
        NodeRun(stage="again", test="burn-in", nodes=(A,), word=Word.PASS),
    )
    assert words_by_test(A, runs) == {
        ("burn", "burn-in"): Word.FAIL,
        ("burn", "link-counters"): Word.PASS,
        ("again", "burn-in"): Word.PASS,
    }
    assert failing_tests(A, runs) == (("burn", "burn-in"),)
    assert failing_tests(A, ()) == ()


SITE = {
    "spec": {
        "nodePools": [
            {"name": "gpu", "nodes": [A, "node-b"]},
            {"name": "other", "nodes": ["node-c"]},
            {"name": "labelled", "selector": {"x": "y"}},
        ],
        "readiness": {
            "periodic": {"schedule": "0 3 * * 0", "stages": ["links", 7]},
            "stages": [
                {"name": "burn", "tests": ["burn-in", 3]},  # the first pool's
                {"name": "links", "pool": "gpu", "tests": ["link-counters"]},
                {"name": "far", "pool": "other", "tests": ["nccl-all-reduce"]},
                {"name": "twice", "pool": "gpu", "tests": ["burn-in", "burn-in"]},
                "not a stage",
                {"pool": "gpu", "tests": ["unnamed"]},
            ],
        },
    }
}


def test_the_tests_a_site_runs_on_a_node() -> None:
    assert planned_tests(SITE, A) == (
        ("burn", "burn-in"),
        ("links", "link-counters"),
        ("twice", "burn-in"),
    )
    assert planned_tests(SITE, "node-c") == (("far", "nccl-all-reduce"),)
    assert planned_tests(SITE, "node-z") == ()
    assert planned_tests({"spec": []}, A) == ()
    assert periodic_stages(SITE) == ("links",)
    assert periodic_stages({"spec": {"readiness": {}}}) == ()
