"""The gate before a node returns to service: `quarantine --release` needs newer evidence.

A quarantined node is released only when runs of the same site, newer than the run that
quarantined it (measured later, by the site folder's order: `report.folder.runs_after`),
that verify against their SHA256SUMS and are not refused (NVC755), hold it `cleared` and
passed it on each test that failed it:

- the newest newer run that judges the node decides its status, which must be `cleared`:
  a node cleared once and failed again since stays held;
- each test that failed it (`Mark.tests`, from the quarantining run's own verdicts), and
  each test a newer run failed it on since, must have been run on the node by a newer
  run, and the newest that ran it must have passed the node on it
  (`results/nodetests.py`): a period of the link counters alone clears no node that
  failed its burn-in, nor does a burn-in that ran on the other nodes but not on this one.

Otherwise the node is refused, nothing is sent for it, and the refusal names the evidence
missing: no newer run judges the node (none collected, or none that verifies: say which);
the newest holds it `failed`, `suspect`, or otherwise; or the tests no newer run passed it
on, with how to get them (the next period, where `readiness.periodic` runs the stage; a
new run of the site's stage otherwise).

The newer runs are the sibling folders of the quarantining run (its site folder), and
only they are verified: older runs cannot clear the mark. A run given alone, outside a
site folder, has none. A newer run is evidence only for its own site: one of another site
(NVC782), or judged against another site file than the quarantining run was (NVC783,
where both record its sha256), is no evidence, and a refusal names it with both sites.
Of each newer run only what decides is read (`results/judgednodes.py`: its site, site
file, node statuses and each node's groups), never the whole archive. `--node` narrows
the release to named nodes.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nvcregen.core import codes
from nvcregen.quarantine.marks import Mark, Marks, Refusal, printable
from nvcregen.report.folder import runs_after
from nvcregen.results.archivemodel import ArchiveFileError
from nvcregen.results.judgednodes import JudgedNodes, judged_nodes
from nvcregen.results.nodetests import TestKey
from nvcregen.results.words import Word

OTHER_SITE = codes.NVC782.code
OTHER_SITE_FILE = codes.NVC783.code


@dataclass(frozen=True)
class Evidence:
    """The newer runs of a site: verified ones with how they judged nodes, and the rest."""

    verified: tuple[tuple[str, JudgedNodes], ...]  # (run id, what it judged), oldest first
    unverified: tuple[str, ...]  # newer run ids that do not verify or are refused
    foreign: tuple[str, ...] = ()  # findings: newer runs of another site or site file

    def judged(self, node: str) -> tuple[str, str] | None:
        """The newest verified run that judges `node`, and its status there; None if none."""
        return self._index.status.get(node)

    def ran(self, node: str, test: TestKey) -> tuple[str, Word] | None:
        """The newest verified run that ran `test` on `node`, and the node's word on it."""
        return self._index.tests.get(node, {}).get(test)

    def failed_since(self, node: str) -> tuple[TestKey, ...]:
        """The tests a newer run failed `node` on, in the order first failed."""
        return tuple(self._index.failed.get(node, {}))

    @functools.cached_property
    def _index(self) -> _Newest:
        """Each node's newest verdict and test words, from one pass over the runs."""
        newest = _Newest({}, {}, {})
        for run_id, judged in self.verified:  # oldest first: a newer run overwrites
            newest.status.update(
                (node, (run_id, status)) for node, status in judged.statuses.items()
            )
            for node, words in judged.tests.items():
                newest.tests.setdefault(node, {}).update(
                    (test, (run_id, word)) for test, word in words.items()
                )
                failed = [test for test, word in words.items() if word is Word.FAIL]
                if failed:
                    newest.failed.setdefault(node, {}).update(dict.fromkeys(failed))
        return newest


@dataclass(frozen=True)
class _Newest:
    status: dict[str, tuple[str, str]]  # node -> (run id, status)
    tests: dict[str, dict[TestKey, tuple[str, Word]]]  # node -> test -> (run id, word)
    failed: dict[str, dict[TestKey, None]]  # node -> tests any newer run failed it on


NAMED = 3  # runs (and tests) a refusal names; it is written once per held node


def newer_runs(
    run_dir: Path, site: str, site_sha256: str = "", nodes: Collection[str] | None = None
) -> Evidence:
    """The runs of `run_dir`'s site folder measured after it, each verified (`runs_after`).

    Args:
        run_dir: The quarantining run's folder.
        site: Its site's name: a newer run of another is no evidence (NVC782).
        site_sha256: The sha256 of the site file it was judged against: a newer run that
            records another is no evidence either (NVC783); "" checks no file.
        nodes: The nodes whose tests are asked about (the marks'); None: every node.

    """
    try:
        later = runs_after(run_dir)
    except OSError:  # its site folder cannot be listed: no newer run is known
        later = None
    if later is None:
        return Evidence((), ())
    verified: list[tuple[str, JudgedNodes]] = []
    unverified: list[str] = []
    foreign: list[str] = []
    for entry in later:
        if entry.problems:
            unverified.append(entry.run_id)
            continue
        try:
            judged = judged_nodes(entry.path, nodes)
        except (ArchiveFileError, OSError):  # verified, yet not what collect writes
            unverified.append(entry.run_id)
            continue
        other = _other_site(entry.run_id, judged, site, site_sha256)
        if other:
            foreign.append(other)
        else:
            verified.append((entry.run_id, judged))
    return Evidence(tuple(verified), tuple(unverified), tuple(foreign))


def _other_site(run_id: str, judged: JudgedNodes, site: str, site_sha256: str) -> str:
    """Why a newer run is no evidence for `site`'s quarantine; "" when it is its site's."""
    if judged.site != site:
        return (
            f"error[{OTHER_SITE}]: {run_id} is a run of site {judged.site!r}, not of"
            f" {site!r} (the quarantine's): no evidence for this site's nodes (hint: a run"
            " copied into another site's folder; move it back)"
        )
    if site_sha256 and judged.site_sha256 and judged.site_sha256 != site_sha256:
        return (
            f"error[{OTHER_SITE_FILE}]: {run_id} was judged against site file sha256"
            f" {judged.site_sha256[:12]}, not {site_sha256[:12]} as the quarantine was (its"
            " pools or thresholds may differ): no evidence for this quarantine (hint: collect"
            " its logs again with the quarantine's site file, or quarantine from a run of"
            " this one)"
        )
    return ""


def gate_release(marks: Marks, evidence: Evidence, nodes: Sequence[str] = ()) -> Marks:
    """The marks a release may take off: newer evidence clears each node of them.

    `nodes` (from `--node`) narrows the release; a named node the run did not quarantine
    is refused too.
    """
    own = {m.node for m in marks.marks}
    wanted = set(nodes) or own
    refused = list(marks.refused)
    refused += [
        Refusal(node, "not quarantined", f"{marks.run} did not quarantine it")
        for node in sorted(set(nodes) - own)
    ]
    kept = []
    for mark in marks.marks:
        if mark.node not in wanted:
            continue
        why = _missing(mark, marks, evidence)
        if why is None:
            kept.append(mark)
        else:
            refused.append(Refusal(mark.node, "quarantined", why))
    return replace(marks, marks=tuple(kept), refused=tuple(refused))


def _missing(mark: Mark, marks: Marks, evidence: Evidence) -> str | None:
    """What evidence a release of the node lacks; None when newer verified runs clear it."""
    judged = evidence.judged(mark.node)
    if judged is None:
        skipped = (
            f" ({_some(evidence.unverified)} do not verify or are refused)"
            if evidence.unverified
            else ""
        )
        others = "".join(f"; {why}" for why in evidence.foreign[:NAMED])
        if len(evidence.foreign) > NAMED:
            others += f"; and {len(evidence.foreign) - NAMED} more runs of another site or file"
        needs = f" it needs a pass of {_tests(mark.tests)};" if mark.tests else ""
        return (
            f"no verified run newer than {marks.run} judges it{skipped}:{needs}"
            f" {_how(mark.tests, marks.periodic)}{others}"
        )
    run_id, status = judged
    if status != "cleared":
        return f"the newest run that judges it, {run_id}, holds it {status}: it stays held"
    if not mark.tests:  # nothing says what failed it, nor what the site runs on it
        return (
            f"the newest run that judges it, {run_id}, clears it, but neither {marks.run} nor"
            " the site names a test that ran on it: nothing shows what a newer run must"
            " pass; release it by hand once it is checked (remove the mark)"
        )
    wanted = [*mark.tests, *(t for t in evidence.failed_since(mark.node) if t not in mark.tests)]
    lacking = [
        (test, found)
        for test in wanted
        for found in [evidence.ran(mark.node, test)]
        if found is None or found[1] is not Word.PASS
    ]
    if not lacking:
        return None
    said = [_lacks(test, found) for test, found in lacking]
    more = f"; and {len(said) - NAMED} more" if len(said) > NAMED else ""
    source = (
        f"each test the site runs on it ({marks.run} records no test that failed it)"
        if mark.tests_from == "plan"
        else "each test that failed it"
    )
    return (
        f"the newest run that judges it, {run_id}, clears it, but without evidence for"
        f" {source}: {'; '.join(said[:NAMED])}{more}:"
        f" {_how(tuple(t for t, _ in lacking), marks.periodic)}"
    )


def _lacks(test: TestKey, found: tuple[str, Word] | None) -> str:
    """One test a release lacks: never run on the node since, or not passed there."""
    name = _name(test)
    if found is None:
        return f"{name} (no newer run ran it on this node)"
    return f"{name} (the newest run that ran it on this node, {found[0]}, judged it {found[1]})"


def _how(tests: Sequence[TestKey], periodic: Sequence[str]) -> str:
    """How to get a pass of `tests` on the node: the stages to run again, and where."""
    stages = list(dict.fromkeys(stage for stage, _ in tests))
    timed = [s for s in stages if s in periodic]
    other = [s for s in stages if s not in periodic]
    if not stages:
        return (
            "run the site's tests on it again (a run of this site file, or a period of"
            " readiness.periodic), collect it into this site folder, then release"
        )
    ways = []
    if timed:
        ways.append(
            f"the next period of readiness.periodic runs {_stages(timed)}"
            " (`nvcregen collect --period latest`)"
        )
    if other:
        it = "them" if len(other) > 1 else "it"
        ways.append(
            f"readiness.periodic does not run {_stages(other)}: run {it} again on the node"
            " with this site file (a new one-shot run: `nvcregen retest` writes another site,"
            " whose runs are no evidence here)"
        )
    return f"{'; '.join(ways)}; collect into this site folder, then release"


def _stages(names: Sequence[str]) -> str:
    """`stage a` or `stages a, b`, the first NAMED and how many more."""
    return f"stage{'s' if len(names) > 1 else ''} {_some([printable(n) for n in names])}"


def _tests(tests: Sequence[TestKey]) -> str:
    """`stage / test, ...`, the first NAMED and how many more."""
    return _some([_name(test) for test in tests])


def _name(test: TestKey) -> str:
    """`stage / test`, printable: both are read from an archive."""
    return printable(f"{test[0]} / {test[1]}")


def _some(run_ids: Sequence[str]) -> str:
    """The first NAMED run ids, and how many more: a refusal is repeated for every node."""
    named = ", ".join(run_ids[:NAMED])
    return named + (f" and {len(run_ids) - NAMED} more" if len(run_ids) > NAMED else "")
