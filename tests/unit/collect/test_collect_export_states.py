"""A ReportExport whose snapshot is gone or not yet written never passes (issue #31)."""

from __future__ import annotations

from pathlib import Path

import pytest
from labstate import find, lab_state, write_export

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions, CollectOutcome
from nvcregen.collect.output import summary_line
from nvcregen.core.errors import ExitCode
from nvcregen.results.models import ObjectRef
from nvcregen.results.payloads import ReportExportResult, Verification
from nvcregen.results.verdicts import Word, judge_export

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
EXPORT = "rex-r-lab-two-node"


@pytest.mark.parametrize(
    ("verification", "word"),
    [
        (Verification.VERIFIED, Word.PASS),
        (Verification.MISMATCH, Word.FAIL),
        (Verification.NO_SNAPSHOT, Word.INCOMPLETE),
        (Verification.NOT_READY, Word.INCOMPLETE),
    ],
)
def test_only_a_verified_export_passes(verification: Verification, word: Word) -> None:
    export = ReportExportResult(
        ref=ObjectRef(kind="ReportExport", name=EXPORT), source="c", verification=verification
    )
    assert judge_export(export).word is word


def collected(tmp_path: Path, objects: list[dict[str, object]]) -> CollectOutcome:
    folder = write_export(tmp_path / "export", objects)
    return collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT, from_dir=folder))


def test_an_export_whose_snapshot_is_gone_is_incomplete(tmp_path: Path) -> None:
    objects = lab_state()
    objects.remove(find(objects, "ConfigMap", "snapshot-r-lab-two-node"))
    outcome = collected(tmp_path, objects)
    (export,) = outcome.verdicts.exports
    assert (export.verification, export.word) == (Verification.NO_SNAPSHOT, Word.INCOMPLETE)
    assert outcome.verdicts.word is Word.INCOMPLETE
    assert outcome.exit_code is ExitCode.DRIFT
    assert summary_line(outcome).endswith(": incomplete (9 pass, 1 incomplete, 0 fail)\n")


def test_an_export_not_yet_delivered_is_incomplete(tmp_path: Path) -> None:
    objects = lab_state()
    find(objects, "ReportExport", EXPORT)["status"] = {"phase": "Pending"}
    outcome = collected(tmp_path, objects)
    (export,) = outcome.verdicts.exports
    assert (export.verification, export.word) == (Verification.NOT_READY, Word.INCOMPLETE)
    assert outcome.verdicts.word is Word.INCOMPLETE
    assert summary_line(outcome).endswith(": incomplete (9 pass, 1 incomplete, 0 fail)\n")
