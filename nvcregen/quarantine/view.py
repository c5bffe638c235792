"""What `nvcregen quarantine` prints: the marks (dry run) or what was done, text or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nvcregen.quarantine.apply import Outcome
from nvcregen.quarantine.marks import EFFECT, KEY, Mark, Marks, tests_text


def as_json(marks: Marks, outcomes: Sequence[Outcome] | None, *, release: bool) -> str:
    """The marks and, after `--apply`, what happened to each node."""
    done = {o.node: o for o in outcomes or ()}
    nodes: list[dict[str, Any]] = []
    for mark in marks.marks:
        entry: dict[str, Any] = {
            "node": mark.node,
            "labels": mark.labels,
            "annotations": mark.annotations,
            "taint": mark.taint,
            "tests": [{"stage": stage, "test": test} for stage, test in mark.tests],
            "testsFrom": mark.tests_from,
        }
        if mark.node in done:
            entry["action"] = done[mark.node].action
            entry["detail"] = done[mark.node].detail
        nodes.append(entry)
    data = {
        "site": marks.site,
        "run": marks.run,
        "mode": ("release" if release else "apply") if outcomes is not None else "dry-run",
        "nodes": nodes,
        "notQuarantined": [{"node": n.node, "status": n.status} for n in marks.left],
        "refused": [{"node": r.node, "status": r.status, "why": r.why} for r in marks.refused],
    }
    return json.dumps(data, indent=2, sort_keys=True)


def as_text(marks: Marks, outcomes: Sequence[Outcome] | None, *, release: bool) -> list[str]:
    """One line a node, then the held-back nodes left alone."""
    if not marks.marks and release:
        lines = [f"{marks.run}: nothing to release"]
    elif not marks.marks:
        planned = " the site names" if marks.refused else ""
        lines = [f"{marks.run}: no failed node{planned}, nothing to quarantine"]
    elif outcomes is None:
        verb = "would release" if release else "would set"
        lines = [
            f"{marks.run}: dry run ({'--release --apply' if release else '--apply'} to write);"
            f" {verb} on {len(marks.marks)} failed node(s): label {KEY}={marks.site},"
            f" taint {KEY}={marks.site}:{EFFECT}"
        ]
        lines += [f"  {m.node}{_tests(m)}: {m.reason}" for m in marks.marks]
    else:
        lines = [f"{marks.run}: {'release' if release else 'quarantine'}"]
        for outcome in outcomes:
            detail = f" ({outcome.detail})" if outcome.detail else ""
            lines.append(f"  {outcome.node}: {outcome.action}{detail}")
    if marks.left:
        held = ", ".join(f"{n.node} ({n.status})" for n in marks.left)
        lines.append(f"not quarantined, not proven faulty (retest them first): {held}")
    if marks.refused:
        lines.append(f"refused, nothing sent for {len(marks.refused)} node(s):")
        alike: dict[str, list[str]] = {}  # a whole pool refused for one reason: one line
        for r in marks.refused:
            alike.setdefault(r.why, []).append(f"{r.node} ({r.status})")
        lines += [f"  {', '.join(nodes)}: {why}" for why, nodes in alike.items()]
    return lines


def _tests(mark: Mark) -> str:
    """The tests a newer run must pass on the node, as the annotation says them."""
    return f" (tests: {tests_text(mark.tests, mark.tests_from)})" if mark.tests else ""
