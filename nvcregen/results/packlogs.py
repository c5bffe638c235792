"""A packed run's log split back into one run's log per test (pure; issue #33).

With `readiness.packing: packed` a node pack's pod (one per node of a chunk) or a group
pack's launcher runs a stage's tests one after the other, each test one section of its
log (`engines/readiness/trainer/packed.py`):

    @@nvcregen-pack begin test=<test> [node=<spec.nodeName> pod=<pod>] start=<UTC time>
    ... what the test's own run would print ...
    @@nvcregen-pack end test=<test> rc=<exit code>

Each section is read as the log of that test's run on the pod's node (a node pack) or
the TrainJob's node group (a group pack), in that round, by the same parsers and
verdicts as a run of its own (`logruns.py`): downstream nothing knows about packs. Its
exit code stands for the run's Job: rc != 0 fails that test on that node or group only
(the packed Job's own `Failed` condition says only that some node failed something).
Lines may carry `kubectl logs --timestamps` prefixes (`ingest.lines.strip_prefix`); a
marker line is looked at up to `MAX_LINE` characters, so hostile lines cost no more.

The pod's node is the API's `spec.nodeName` (a cluster collection), else the node that
the sections naming this very pod (its log's name) agree on by a strict majority.
Refused as evidence, each with its code and the log's path and line (the section's run
then has no log: incomplete, never cleared, unless the code fails it):

- NVC743: a section begun but never ended (a pod cut short, a truncated log);
- NVC744: a marker line that does not read, an end without its begin, a test the pack
  does not hold, a test twice in one log (both sections), a section out of the pack's
  order;
- NVC751: a section from another node than its pod's, or a pod on a node its Job's
  chunk does not name: another run's evidence, as NVC730 (its run fails, and its node
  is neither failed nor cleared by what it holds); so is an NCCL section whose ranks
  ran on another host than its pod (`logruns.py`);
- NVC752: two pod logs of one Job on the same node: neither is that node's evidence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from nvcregen.core import codes
from nvcregen.ingest.limits import MAX_LINE
from nvcregen.ingest.lines import strip_prefix
from nvcregen.plan.model import TestUnit
from nvcregen.results.findings import Finding
from nvcregen.results.kindlogs import Measured
from nvcregen.results.logplace import PackPlaced, Placed
from nvcregen.results.logrecords import LogRecord, RunLog
from nvcregen.results.words import Word

MARK = "@@nvcregen-pack"
REFUSED = "refused"
TRUNCATED = codes.NVC743.code
UNORDERED = codes.NVC744.code
FOREIGN = codes.NVC751.code
TWICE = codes.NVC752.code
_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_BEGIN = re.compile(
    rf"^{MARK} begin test=(?P<test>[a-z0-9](?:[-a-z0-9]{{0,61}}[a-z0-9])?)"
    rf"(?: node=(?P<node>{_NAME}) pod=(?P<pod>{_NAME}))?"
    r" start=(?P<start>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$"
)
_END = re.compile(rf"^{MARK} end test=(?P<test>[a-z0-9](?:[-a-z0-9]{{0,61}}[a-z0-9])?)"
                  r" rc=(?P<rc>\d{1,3})$")  # fmt: skip


@dataclass(frozen=True)
class Section:
    """One test's section of a packed log: its lines between the markers, and its end.

    `rc` is None for a section that was never ended; `node` and `pod` are "" in a
    group pack's launcher log, whose begin lines name neither.
    """

    test: str
    line: int
    node: str
    pod: str
    start: str
    text: str
    rc: int | None


@dataclass(frozen=True)
class Piece:
    """One section as one run's log: where it belongs, its bytes, and its exit code."""

    placed: Placed
    log: RunLog
    rc: int


@dataclass(frozen=True)
class Refusal:
    """A section refused as evidence of its run (`error` starts with its code)."""

    placed: Placed
    log: RunLog
    error: str


@dataclass(frozen=True)
class Split:
    """What one packed log holds: its runs, its refused sections, what names no run.

    `run` is its Job or TrainJob; `node` the node the pod ran on (a node pack), "" when
    it is not known.
    """

    log: RunLog
    run: str
    node: str = ""
    pieces: list[Piece] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def sections(text: str) -> tuple[list[Section], list[tuple[int, str]]]:
    """The sections of a packed log in order, and its marker lines that are wrong.

    A begin line while a section is open ends that one unfinished; so does the end of
    the log.
    """
    found: list[Section] = []
    wrong: list[tuple[int, str]] = []
    lines = text.splitlines(keepends=True)
    open_: tuple[re.Match[str], int] | None = None

    def close(end: int, rc: int | None) -> None:
        assert open_ is not None
        begin, at = open_
        body = "".join(lines[at : end - 1])
        found.append(
            Section(
                begin["test"], at, begin["node"] or "", begin["pod"] or "", begin["start"], body, rc
            )
        )

    for number, raw in enumerate(lines, start=1):
        if MARK not in raw[:MAX_LINE]:
            continue
        line = strip_prefix(raw[:MAX_LINE])
        if not line.startswith(MARK):
            continue
        if (begin := _BEGIN.match(line)) is not None:
            if open_ is not None:
                close(number, None)
            open_ = (begin, number)
        elif (end := _END.match(line)) is not None:
            if open_ is None or open_[0]["test"] != end["test"]:
                wrong.append((number, f"an end line of {end['test']} without its begin line"))
                if open_ is not None:
                    close(number, None)
            else:
                close(number, int(end["rc"]))
            open_ = None
        else:
            wrong.append((number, f"an unreadable {MARK} line (no test, node, pod, time or rc)"))
    if open_ is not None:
        close(len(lines) + 1, None)
    return found, wrong


def split(log: RunLog, where: PackPlaced) -> Split:
    """A packed run's log (one pod's, or a launcher's) as one run's log per test."""
    text = log.data.decode("utf-8", errors="replace")
    found, wrong = sections(text)
    done = Split(log, where.run)
    done.problems.extend(f"{UNORDERED}: {log.path}:{n}: {why}" for n, why in wrong)
    units = {u.test.name: u for u in where.pack.units}
    known = []
    for s in found:
        if s.test in units:
            known.append(s)
        else:
            done.problems.append(
                f"{UNORDERED}: {log.path}:{s.line}: a section of {s.test}, which"
                f" {where.pack.first.stage.name} {where.pack.name} does not run"
                f" ({', '.join(where.pack.tests)}): not read"
            )
    if where.pack.per_node:
        node, why = _pod_node(log, where, known)
        if not node:
            done.problems.append(f"{FOREIGN}: {log.path}: {why}: none of its sections is read")
            return done
        done = Split(log, where.run, node, done.pieces, done.refused, done.problems)
    seen = Counter(s.test for s in known)
    order = {test: i for i, test in enumerate(where.pack.tests)}
    last = -1
    for s in known:
        placed = _placed(units[s.test], where, done.node)
        if placed is None:  # a fabric grouping that holds no group of this node alone
            done.problems.append(
                f"{UNORDERED}: {log.path}:{s.line}: {s.test} runs no group of {done.node} alone"
            )
            continue
        piece_log = RunLog(log.namespace, log.name, s.text.encode(), log.node, s.pod, s.line)
        error = _refusal(log, where, done.node, s, seen[s.test] > 1, order[s.test] < last)
        if seen[s.test] == 1:
            last = max(last, order[s.test])
        if error is not None:
            done.refused.append(Refusal(placed, piece_log, error))
        else:
            assert s.rc is not None
            done.pieces.append(Piece(placed, piece_log, s.rc))
    return done


def _refusal(
    log: RunLog, where: PackPlaced, node: str, s: Section, twice: bool, late: bool
) -> str | None:
    """Why a section is no evidence of its run, with its code; None when it is."""
    at = f"{log.path}:{s.line}"
    if where.pack.per_node and s.node != node:
        whose = "the API scheduled its pod on" if log.node else "its pod's other sections name"
        return (
            f"{FOREIGN}: {at}: the section of {s.test} is from node {s.node or '(none)'}"
            f" (pod {s.pod or '(none)'}, started {s.start}), but {whose} {node}:"
            " another run's evidence"
        )
    if twice:
        return f"{UNORDERED}: {at}: a second section of {s.test} in one log: neither is read"
    if late:
        return (
            f"{UNORDERED}: {at}: {s.test} after a test the pack runs after it"
            f" ({', '.join(where.pack.tests)}): not one run's output in order"
        )
    if s.rc is None:
        return f"{TRUNCATED}: {at}: the section of {s.test} never ends (no `{MARK} end` line)"
    return None


def _pod_node(log: RunLog, where: PackPlaced, found: Sequence[Section]) -> tuple[str, str]:
    """The node a node pack's pod ran on, or "" and why it is not known or not planned.

    The API's `spec.nodeName` when the log was read from a cluster; else the node of its
    Job's chunk that the sections naming this pod agree on by a strict majority (all
    sections when the log is named after its Job, not its pod).
    """
    if log.node:
        node = log.node
    else:
        own = [s for s in found if s.pod == log.name] if log.name != where.run else list(found)
        # its Job's affinity keeps the pod on its chunk: a node outside it has no vote
        own = [s for s in own if s.node in where.nodes] or own
        counted = Counter(s.node for s in own)
        if not counted:
            return "", f"no node is named by this pod's ({log.name}) own sections"
        node, votes = counted.most_common(1)[0]
        if 2 * votes <= len(own):
            named = ", ".join(sorted(counted))
            return "", f"this pod's ({log.name}) own sections name no one node ({named})"
    if node not in where.nodes:
        return "", (
            f"its pod ran on {node}, which {where.run} (chunk {where.index}: "
            f"{', '.join(where.nodes)}) does not name"
        )
    return node, ""


def _placed(unit: TestUnit, where: PackPlaced, node: str) -> Placed | None:
    """The run a section stands for: the test on the pod's node, or on the group."""
    if not where.pack.per_node:
        return Placed(unit, where.run, where.round, where.index, where.nodes, where.obj)
    slot = where.slots.slot(unit, node)  # indexed once per pack and test, not per section
    if slot is None:
        return None
    return Placed(unit, where.run, where.round, slot, (node,), where.obj)


def same_node(splits: Sequence[Split]) -> list[Split]:
    """The splits with every section of two pod logs of one Job on one node refused."""
    keys = {id(s): (s.log.namespace, s.run, s.node) for s in splits}
    by_key: dict[tuple[str, str, str], list[str]] = {}
    for s in splits:
        if s.node:
            by_key.setdefault(keys[id(s)], []).append(s.log.path)
    found = []
    for s in splits:
        paths = by_key.get(keys[id(s)], [])
        if len(paths) < 2:
            found.append(s)
            continue
        others = sorted(p for p in paths if p != s.log.path)
        error = (
            f"{TWICE}: {s.log.path}: this pod and {', '.join(others)} of the same Job both ran"
            f" on {s.node}: neither is read as its evidence"
        )
        refused = [Refusal(p.placed, p.log, error) for p in s.pieces]
        refused += [Refusal(r.placed, r.log, error) for r in s.refused]
        found.append(Split(s.log, s.run, s.node, [], refused, s.problems))
    return found


def on_its_node(
    record: LogRecord, measured: Measured, pod: str, nodes: Sequence[str], line: int = 0
) -> tuple[LogRecord, Measured] | str:
    """A node pack's collective section with its ranks' hosts named by node, or why it is not.

    Its ranks ran in the pod its begin line names (a pod's hostname is its name) on the
    section's node: each such host becomes the node, so the plan binds it by node
    (`binding.py`) as it binds a run of its own. A host that is neither the pod nor the
    node is another run's evidence (NVC751): another pod of the same Job, say. `line` is
    the section's begin line in its pod's log.
    """
    node = nodes[0] if len(nodes) == 1 else ""
    named = {pod, node}
    ranks = measured.ranks
    other = [h for h in dict.fromkeys(r.host for r in ranks) if h.split(".")[0] not in named]
    if other:
        return (
            f"{FOREIGN}: {record.path}:{line}: ranks of its section ran on {', '.join(other)},"
            f" not in its pod {pod} on {node}: another run's evidence"
        )
    hosts = tuple(dict.fromkeys(node if h.split(".")[0] == pod else h for h in record.hosts))
    bound = tuple(r.model_copy(update={"host": node}) for r in ranks)
    return record.model_copy(update={"hosts": hosts}), replace(measured, ranks=bound)


def pack_findings(records: Iterable[LogRecord]) -> list[Finding]:
    """A finding for every refused section: where it is, and its code's weight."""
    found = []
    for r in records:
        if r.status != REFUSED or not r.errors:
            continue
        code, _, message = r.errors[0].partition(": ")
        kind = "unbound" if code in (FOREIGN, TWICE) else "refused"
        word = Word.FAIL if code == FOREIGN else Word.INCOMPLETE
        found.append(
            Finding.model_validate(
                {
                    "code": code,
                    "kind": kind,
                    "word": word,
                    "stage": r.stage,
                    "test": r.test,
                    "group": r.group,
                    "round": r.round,
                    "source": r.run,
                    "nodes": r.nodes,
                    "message": message,
                }
            )
        )
    return sorted(found, key=lambda f: (f.stage, f.test, f.group, f.round or 0, f.source))
