"""`check` loads the sites and replays each site folder while the workers read the files.

The workers start with the Kubernetes version each site file states; a site that does
not load is checked against the default version, as before, by checking its files again.
The findings are the same whether the files are read here or on several cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.check import parallel, tree
from nvcregen.core import forked
from nvcregen.core.errors import Diagnostic
from nvcregen.kubeschema.registry import DEFAULT_KUBE_VERSION

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The shipped tree: a site that no longer loads, one on another version and without
    its LocalQueue (the replay finds nothing admitted), and an object with a bad field."""
    shutil.copytree(ROOT / "out", tmp_path / "out")
    shutil.copytree(ROOT / "sites", tmp_path / "sites")
    lab = tmp_path / "sites" / "h20-3e-lab.yaml"  # states 1.29 but fails its schema
    text = lab.read_text().replace('version: "1.30"', 'version: "1.29"', 1)
    lab.write_text(text.replace("spec:\n", "spec:\n  bogus: 1\n", 1))
    trainer = tmp_path / "sites" / "h20-3e-trainer.yaml"
    trainer.write_text(trainer.read_text().replace('version: "1.30"', 'version: "1.31"', 1))
    first = sorted((tmp_path / "out" / "l20-pool" / "readiness").rglob("*.yaml"))[-1]
    first.write_text(first.read_text().replace("metadata:", "metadata:\n  bogus: 1", 1))
    (tmp_path / "out" / "h20-3e-trainer" / "queues" / "localqueue-readiness.yaml").unlink()
    return tmp_path


def _check(project: Path) -> list[Diagnostic]:
    return tree.check_tree(project / "out", project, load_catalog())


def test_each_file_is_judged_once_against_the_version_its_site_states(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions, diags = _judged(project, monkeypatch)
    assert versions == {
        # stated 1.29: checked against it once, though the rest of the site does not load
        "h20-3e-lab": {("1.29",)},
        "h20-3e-trainer": {("1.31",)},
        "l20-pool": {("1.33",)},
    }
    assert any("bogus" in d.message for d in diags), "the broken object is reported"


def test_a_version_no_site_may_state_checks_against_the_default(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = project / "sites" / "h20-3e-lab.yaml"
    lab.write_text(lab.read_text().replace('version: "1.29"', 'version: "1.99"', 1))
    versions, _ = _judged(project, monkeypatch)
    assert versions["h20-3e-lab"] == {(DEFAULT_KUBE_VERSION,)}


def _judged(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, set[tuple[str, ...]]], list[Diagnostic]]:
    """The versions each site folder's files were checked with, in turn; the diagnostics."""
    original = parallel.check_file
    judged: dict[Path, list[str]] = {}

    def spied(job: parallel.FileJob) -> parallel.FileResult:
        judged.setdefault(job.path, []).append(job.kube_version)
        return original(job)

    monkeypatch.setattr(forked, "FORK_FROM", 10**9)  # here, so the spy sees each one
    monkeypatch.setattr(parallel, "check_file", spied)
    diags = _check(project)
    versions: dict[str, set[tuple[str, ...]]] = {}
    for path, seen in judged.items():
        versions.setdefault(path.relative_to(project / "out").parts[0], set()).add(tuple(seen))
    return versions, diags


@pytest.mark.slow
def test_the_findings_do_not_depend_on_the_workers(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forked, "FORK_FROM", 10**9)
    here = _check(project)
    monkeypatch.setattr(forked, "FORK_FROM", 2)
    assert _check(project) == here
    codes = {d.code for d in here}
    assert "NVC603" in codes, codes  # the bad field
    assert codes & {f"NVC67{n}" for n in range(7)}, codes  # the replay of the trainer site


_STARTED_BEFORE_MODELS = """
import sys
from pathlib import Path

from nvcregen.check import parallel
from nvcregen.check.checker import CheckOptions, run_check
from nvcregen.core import forked

forked.FORK_FROM = 2
seen = []
started = parallel.iter_check_files


def spied(jobs, meanwhile):
    seen.append(sorted(m for m in ("pydantic", "nvcregen.spec.v1alpha1") if m in sys.modules))
    return started(jobs, meanwhile)


parallel.iter_check_files = spied
diags, _ = run_check(CheckOptions(Path(sys.argv[1]) / "out", Path(sys.argv[1])))
assert "pydantic" in sys.modules, "the sites were loaded"
print(seen, len(diags))
"""


@pytest.mark.slow
def test_the_workers_start_before_the_site_models_are_imported(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _STARTED_BEFORE_MODELS, str(project)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout, not an installed one
    )
    assert done.stdout.split(" ")[0] == "[[]]", done.stdout
