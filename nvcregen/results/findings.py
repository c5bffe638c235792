"""Findings about the evidence itself, and how they bear on the verdicts (pure).

A threshold asks whether a number is high enough; a finding asks whether the number can
be believed and whether it measured what the plan meant (docs/design/0012-evidence.md):

- `unbound` (NVC730-734, NVC740, NVC750): the evidence was produced by a host, a GPU
  model or a number of ranks the plan does not name for its run, it is another run's
  evidence too, or it names a node the plan does not name;
- `implausible` (NVC735): a bus bandwidth above what the run's links allow;
- `anomaly` (NVC736-738, NVC741): a sweep whose shape a person would stop at (a
  collapse, a decline as messages grow, rounds that disagree), or a copied round;
- `unmeasured` (NVC742): a final round with no figure, or a run that succeeded with
  no final round that has one: nothing shows what it measured;
- `bound` (NVC739): how evidence was bound when it could not be bound by name (a
  selector pool, a device the driver does not name): a note, never a reason to fail;
- `refused` (NVC745-747): a measurement that cannot be evidence (a number that is not
  one, impossible times, another object's owner reference), left out of every figure;
- `missing` (NVC748): a group the Workflow names, or a node the pool names, that no
  valid measurement holds.

A finding that does not pass is added to the reasons of every verdict of its run: the
threshold verdicts of its group (or all groups, for a finding about the whole run) and
the run's own verdict, so evidence that is unbound or implausible never passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from nvcregen.results.models import StatusModel
from nvcregen.results.planned import UNPLANNED
from nvcregen.results.words import Reason, Word, worst

Kind = Literal["unbound", "implausible", "anomaly", "unmeasured", "bound", "refused", "missing"]


class Finding(StatusModel):
    """One thing the evidence of one run showed, with its code and where it is."""

    code: str
    kind: Kind
    word: Word
    stage: str = ""
    test: str = ""
    group: str = ""
    round: int | None = None
    source: str = ""
    sizes: tuple[int, ...] = ()
    nodes: tuple[str, ...] = ()
    message: str

    @property
    def where(self) -> str:
        """The round it is about (`round 2 (NAME)`), its group, or "" for the whole run."""
        if self.round is not None:
            return f"round {self.round} ({self.source})" if self.source else f"round {self.round}"
        return f"group {self.group}" if self.group else ""

    @property
    def group_wide(self) -> bool:
        """Whether the finding joins its group's (or every group's) reasons.

        Not for a finding about nodes that no group holds, nor about a name outside the plan
        (NVC750): the run fails for it, but no planned node beside it does.
        """
        if self.code == UNPLANNED:
            return False
        return bool(self.group) or not self.nodes

    def reason(self) -> Reason:
        """The finding as a verdict's reason: its code, where, and what."""
        where = f"{self.where}: " if self.where else ""
        return Reason(code=self.kind, word=self.word, message=f"{self.code}: {where}{self.message}")

    def holds(self, stage: str, test: str, group: str | None = None) -> bool:
        """Whether this finding is about that run (and group, when one is given)."""
        same = (self.stage, self.test) == (stage, test)
        return same and (group is None or not self.group or self.group == group)


def first_lines(findings: Sequence[Finding]) -> list[str]:
    """Findings that do not pass, then the notes; one line per finding over its rounds."""
    ordered = sorted(findings, key=lambda f: f.word is Word.PASS)
    return summarize_rounds(
        (f.kind, f.code, f.stage, f.test, f.group, f.message, f.round) for f in ordered
    )


Item = tuple[str, str, str, str, str, str, int | None]


def summarize_rounds(items: Iterable[Item]) -> list[str]:
    """`KIND (CODE), STAGE/TEST, rounds 1, 2, 3: MESSAGE`, in first-seen order.

    Shared by `collect`'s output and the report (which reads the same fields from
    verdicts.json): the same finding in every round of a group is one line.
    """
    rounds: dict[tuple[str, ...], list[int]] = {}
    for kind, code, stage, test, group, message, round_ in items:
        found = rounds.setdefault((kind, code, stage, test, group, message), [])
        if round_ is not None:
            found.append(round_)
    lines = []
    for (kind, code, stage, test, group, message), seen in rounds.items():
        where = f"{stage}/{test}" + (f" {group}" if group else "")
        if seen:
            where += f", round{'s' if len(seen) > 1 else ''} {', '.join(map(str, seen))}"
        lines.append(f"{_TITLE.get(kind, kind)} ({code}), {where}: {message}")
    return lines


_TITLE = {
    "unbound": "Unbound evidence",
    "implausible": "Implausible",
    "anomaly": "Anomaly",
    "unmeasured": "No measurement",
    "bound": "Note",
    "refused": "Refused evidence",
    "missing": "Missing evidence",
}


def decisive(findings: Sequence[Finding]) -> list[Finding]:
    """The findings that keep a verdict from passing, in order."""
    return [f for f in findings if f.word is not Word.PASS]


def with_reasons(
    word: Word, reasons: tuple[Reason, ...], findings: Sequence[Finding]
) -> tuple[Word, tuple[Reason, ...]]:
    """A verdict's word and reasons once the findings about it are added."""
    added = tuple(f.reason() for f in decisive(findings))
    if not added:
        return word, reasons
    return worst([word, *(r.word for r in added)]), (*reasons, *added)
