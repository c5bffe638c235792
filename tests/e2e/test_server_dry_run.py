"""Dry-run the rendered example sites on a real cluster: the current context of $KUBECONFIG.

Runs only when the KUBECONFIG environment variable is set (otherwise skipped, with the
reason); nothing is persisted, every object goes through server-side apply with
`dryRun=All`. The cluster may lack the NVCRE CRDs: then "kind unknown to the server"
(NVC641) must be the only problem, since a CRD-less cluster cannot judge those objects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Options
from nvcregen.chain.sites import render
from nvcregen.check.server import server_check
from nvcregen.check.tree import check_tree

ROOT = Path(__file__).resolve().parents[2]
SITES = sorted(p.stem for p in (ROOT / "sites").glob("*.yaml"))

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(
        not os.environ.get("KUBECONFIG"),
        reason="KUBECONFIG is not set: no cluster to dry-run against",
    ),
]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("kubernetes", reason="the `cluster` extra is not installed")
    folder = tmp_path_factory.mktemp("e2e") / "out"
    outcome = render(ROOT, [], folder, Options(), check=False)
    assert sorted(outcome.written) == SITES, outcome.diagnostics
    return folder


@pytest.mark.parametrize("site", SITES)
def test_rendered_site_dry_runs_on_the_current_context(out: Path, site: str) -> None:
    server = server_check(None)
    diags = check_tree(out / site, ROOT, load_catalog(), server=server)
    problems = [f"{d.span}: {d.code}: {d.message}" for d in diags if d.is_error]
    assert {d.code for d in diags if d.is_error} <= {"NVC641"}, "\n".join(problems)
