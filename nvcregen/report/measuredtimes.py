"""When each bandwidth.csv row of an archive was measured, on which nodes, and what says so.

A row is matched to its measurement in summary.json by stage, test, group, round and the
measurement's name (`bandwidth.csv`'s `measurement`: the TrainJob, Job or NVCRE object).
Its time, best first:

- a packed run's row (one test's section of a node pack's pod log or a pair's launcher
  log, design note 0018; every period of `readiness.periodic` is one) takes its own
  section's time: the last `kubectl logs --timestamps` time inside the section (`logs`),
  else the time its begin line prints (`section`: when that test started on its node).
  The Job's completionTime dates the whole pack, every test on every node of a chunk,
  so it stamps no section; nor does a section time after the run finished
  (summary.json's `finished_at`), which no test could have;
- any other row its measurement's completion time: from its log's last
  `kubectl --timestamps` time when the log has them (`logs`), else from the objects
  (`objects`);
- else none here: the exporter takes the archive's collection time (`collection`).

Logs are the archive's own files only (listed in the run folder, not named by
summary.json alone), each read once, bounded (`read_capped`, NVC759), and split into lines
no more than once: its last time from its last lines, its sections only when it has any.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from nvcregen.ingest.lines import last_timestamp
from nvcregen.report.archive import ReadArchive
from nvcregen.results.archive import run_files
from nvcregen.results.archivemodel import BandwidthCsvRow
from nvcregen.results.archiveread import ArchiveFileTooLargeError, read_capped
from nvcregen.results.logrecords import LogRecord
from nvcregen.results.packlogs import MARK, REFUSED, sections

Key = tuple[str, str, str, int, str]  # stage, test, group, round, measurement


@dataclass(frozen=True)
class Measured:
    """A row's measurement time (RFC 3339 UTC, None when nothing dates it), source, nodes."""

    when: str | None
    source: str  # "objects", "logs" or "section"; "" when `when` is None
    nodes: tuple[str, ...]


def row_key(row: BandwidthCsvRow) -> Key:
    """The key a row's measurement is found by."""
    return (row.stage, row.test, row.group, row.round or 0, row.measurement)


def seconds(stamp: str) -> float | None:
    """An RFC 3339 UTC time (`2026-10-14T13:01:00Z`) as seconds since the epoch.

    None when it is no such time (an archive is input: a month 13 is not a time).
    """
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return when.astimezone(UTC).timestamp()


def measured(archive: ReadArchive) -> dict[Key, Measured]:
    """Every measurement of the archive by its rows' key: its time, source and nodes."""
    logs = _Logs(archive)
    ended = seconds(archive.summary.finished_at or "")
    found: dict[Key, Measured] = {}
    for run in archive.summary.runs:
        for m in run.bandwidth:
            key = (run.stage, run.test, m.group, m.iteration or 0, m.ref.name)
            own = logs.section_time(key, ended)
            if own is not None:
                found[key] = Measured(own[0], own[1], m.nodes)
            elif m.completion_time and seconds(m.completion_time) is not None:
                stamped = (m.ref.name, m.iteration or 0) in logs.stamped()
                source = "logs" if stamped else "objects"
                found[key] = Measured(m.completion_time, source, m.nodes)
            else:
                found[key] = Measured(None, "", m.nodes)
    return found


@dataclass(frozen=True)
class _Dated:
    """What this module needs of a packed log's section: no text is kept."""

    test: str
    node: str
    start: str
    stamp: str | None  # its last `kubectl logs --timestamps` time, `YYYYMMDDTHHMMSSZ`


@dataclass(frozen=True)
class _LogFacts:
    """A log's last `--timestamps` time and its sections' times, read from it once."""

    stamp: str | None
    sections: tuple[_Dated, ...]


class _Logs:
    """The archive's logs, each read once into the few facts asked of it.

    A log's text is dropped as soon as its facts are out: an archive of a 1,024-node run
    holds thousands of logs, hundreds of MB, and only their last times are needed.
    """

    def __init__(self, archive: ReadArchive) -> None:
        self.archive = archive
        present = {p for p, kind in run_files(archive.path).items() if kind == "file"}
        # summary.json is input: only logs that are the archive's own files are read
        self.records = [r for r in archive.summary.logs if r.path in present]
        self.by_key: dict[Key, list[LogRecord]] = {}
        for r in self.records:
            if r.status != REFUSED:
                self.by_key.setdefault((r.stage, r.test, r.group, r.round, r.run), []).append(r)
        self._facts: dict[str, _LogFacts | None] = {}
        self._stamped: set[tuple[str, int]] | None = None

    def facts(self, path: str) -> _LogFacts | None:
        """A log's facts; None when it is over its cap or cannot be read."""
        if path not in self._facts:
            try:
                raw = read_capped(self.archive.path / path)
            except (ArchiveFileTooLargeError, OSError):  # verification refuses it first
                self._facts[path] = None
            else:
                self._facts[path] = _read_facts(raw.decode("utf-8", errors="replace"))
        return self._facts[path]

    def section_time(self, key: Key, ended: float | None) -> tuple[str, str] | None:
        """A packed measurement's own section time and source; None when it is not one."""
        records = self.by_key.get(key, [])
        if len(records) != 1:
            return None
        (record,) = records
        facts = self.facts(record.path)
        found = [
            s
            for s in (facts.sections if facts is not None else ())
            if s.test == record.test and (not s.node or s.node in record.nodes)
        ]
        if len(found) != 1:
            return None
        (section,) = found
        if section.stamp is not None:
            when, source = _rfc3339(section.stamp), "logs"
        else:
            when, source = section.start, "section"
        at = seconds(when)
        if at is None or (ended is not None and at > ended):
            return None
        return when, source

    def stamped(self) -> set[tuple[str, int]]:
        """(run, round) of every log whose lines carry `kubectl logs --timestamps` times."""
        if self._stamped is None:
            self._stamped = set()
            for log in self.records:
                facts = self.facts(log.path)
                if facts is not None and facts.stamp is not None:
                    self._stamped.add((log.run, log.round))
        return self._stamped


def _read_facts(text: str) -> _LogFacts:
    """A log's facts, its text split no more than once.

    Its last time is read from its last lines alone (`last_timestamp`); only a log holding
    a pack marker is split into sections (most logs are a run's own and hold none).
    """
    found = sections(text)[0] if MARK in text else []
    dated = tuple(_Dated(s.test, s.node, s.start, last_timestamp(s.text)) for s in found)
    return _LogFacts(last_timestamp(text), dated)


def stamped_logs(archive: ReadArchive) -> set[tuple[str, int]]:
    """(run, round) of every archived log whose lines carry `kubectl --timestamps` times."""
    return _Logs(archive).stamped()


def _rfc3339(stamp: str) -> str:
    """`YYYYMMDDTHHMMSSZ` (`last_timestamp`) as `YYYY-MM-DDTHH:MM:SSZ`, as collect records it."""
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:11]}:{stamp[11:13]}:{stamp[13:15]}Z"
