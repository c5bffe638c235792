"""A node's word on each test of one run, from the groups of it that held the node (pure).

verdicts.json gives each node its status over the whole run and every group that held it
(`nodes.NodeRun`: stage, test, the group's nodes, its word, the finding that made it).
The release gate (`quarantine --release`) needs more than the status: which tests failed
the node in the run that quarantined it, and whether a newer run passed the node on each
of them (a period of the link counters alone says nothing of a node's burn-in). A test is
named by its stage and catalog name (`TestKey`): the same test in another stage runs on
other nodes, at another scope, against other thresholds.

A node's word on one test, by the rules `nodes.judge_nodes` applies to the whole run:

- `fail`: a group of it alone failed (the node failed alone), or groups of several nodes
  failed and none of the test passed (the node is suspect on it);
- `pass`: a group holding the node passed, no group of it alone ended otherwise (a check
  of the node not judged, a round unfinished) and no finding about the evidence that
  names it (NVC745-NVC748: refused or missing) holds it;
- `incomplete`: anything else (only unfinished groups, a check not judged, evidence
  refused).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from nvcregen.results.words import Word

TestKey = tuple[str, str]
"""(stage, test): a test as one stage of a site runs it."""


class Group(Protocol):
    """A group of one run that held the node (verdicts.json `nodes[].runs[]`)."""

    @property
    def stage(self) -> str: ...  # noqa: D102

    @property
    def test(self) -> str: ...  # noqa: D102

    @property
    def nodes(self) -> tuple[str, ...]: ...  # noqa: D102

    @property
    def word(self) -> Word: ...  # noqa: D102

    @property
    def code(self) -> str: ...  # noqa: D102


def words_by_test(node: str, groups: Iterable[Group]) -> dict[TestKey, Word]:
    """The node's word on each test its groups name (see the module's rules)."""
    by_test: dict[TestKey, list[Group]] = {}
    for group in groups:
        by_test.setdefault((group.stage, group.test), []).append(group)
    return {key: _word(node, found) for key, found in by_test.items()}


def _word(node: str, groups: list[Group]) -> Word:
    alone = [g for g in groups if len(g.nodes) <= 1]
    passed = any(g.word is Word.PASS and node in g.nodes for g in groups)
    if any(g.word is Word.FAIL for g in alone):
        return Word.FAIL
    if not passed and any(g.word is Word.FAIL for g in groups):
        return Word.FAIL
    refused = any(g.code and g.word is not Word.PASS for g in groups)
    unfinished = any(g.word is not Word.PASS for g in alone)
    return Word.PASS if passed and not refused and not unfinished else Word.INCOMPLETE


def failing_tests(node: str, groups: Iterable[Group]) -> tuple[TestKey, ...]:
    """The tests the node failed (alone, or suspect on), by stage and name."""
    return tuple(sorted(k for k, w in words_by_test(node, groups).items() if w is Word.FAIL))
