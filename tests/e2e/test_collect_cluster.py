"""Collect from a real cluster: the current context of $KUBECONFIG, read-only.

Runs only when the KUBECONFIG environment variable is set (otherwise skipped, with the
reason). It reads the `lab` test site's objects (usually none exist, so its verdicts are
`incomplete`), writes an archive under a temporary folder and re-verifies it; nothing is
deleted (no `--reclaim`). A cluster without the NVCRE CRDs answers 404 to their lists,
which collect records as notes, not errors.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions
from nvcregen.core.errors import ExitCode
from nvcregen.results.archive import verify_archive

ROOT = Path(__file__).resolve().parents[2]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(
        not os.environ.get("KUBECONFIG"),
        reason="KUBECONFIG is not set: no cluster to collect from",
    ),
]


def test_collect_from_the_current_context_writes_a_verified_archive(tmp_path: Path) -> None:
    pytest.importorskip("kubernetes", reason="the `cluster` extra is not installed")
    # No context and no folder: the kubeconfig's current context.
    outcome = collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT))
    assert outcome.archive.verified, outcome.archive.problems
    assert verify_archive(outcome.archive.path) == []
    assert outcome.exit_code in {ExitCode.OK, ExitCode.DRIFT}
    assert outcome.deleted == ()
