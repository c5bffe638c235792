"""`nvcregen check OUT --server CONTEXT` end to end, against the local fake API server.

A site from the repository's `sites/` is rendered into a scratch project; `check` then
runs the offline checks and sends every generated object through the real kubernetes
client to `fakeapi.py`, whose refusals are chosen by the test, and a refusal must come
back at the generated file's line (tests/realserver/test_cp_check_server.py dry-runs every
shipped site on the real kube-apiserver).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fakeapi import NVCRE, FakeApiServer, closed_port_url, serve, write_kubeconfig
from kubehttp import status

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parents[3]
SITE = "h20-3e-lab"
GPUS_FIELD = "spec.categories[0].options.gpusPerNode"


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with serve() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeApiServer) -> Path:
    """A project with sites/h20-3e-lab.yaml rendered into out/, and a kubeconfig."""
    (tmp_path / "sites").mkdir()
    shutil.copyfile(ROOT / "sites" / f"{SITE}.yaml", tmp_path / "sites" / f"{SITE}.yaml")
    write_kubeconfig(tmp_path / "kubeconfig", fake.url, closed_port_url())
    monkeypatch.chdir(tmp_path)
    assert run("render").exit_code == 0
    return tmp_path


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def check(*extra: str) -> Result:
    return run("check", "out", "--server", "ctx", "--kubeconfig", "kubeconfig", *extra)


def diagnostics(result: Result) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(result.stdout)
    return data


def generated(project: Path) -> list[Path]:
    return sorted((project / "out").rglob("*.yaml"))


def single_node_certification(project: Path) -> Path:
    # The two-node RDMA collectives are WorkloadRuns on H20-3e, which NVCRE does not know.
    pattern = f"*/certification-{SITE}-single-node-*.yaml"
    (path,) = (project / "out" / SITE / "readiness").glob(pattern)
    return path


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_every_object_accepted_exits_0(project: Path, fake: FakeApiServer) -> None:
    result = check()
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "nvcregen: no problems; checked out/ and dry-ran it on context 'ctx'"
    )
    # Every object but the preview of what NVCRE will create, which no one applies.
    preview = [p for p in generated(project) if p.parent.name == "preview"]
    assert preview
    assert len(fake.patches()) == len(generated(project)) - len(preview)
    assert not [r for r in fake.patches() if "trainer.kubeflow.org" in r.path]
    assert {r.query["dryRun"][0] for r in fake.patches()} == {"All"}


def test_a_rejected_object_is_reported_at_the_generated_line(
    project: Path, fake: FakeApiServer
) -> None:
    cert = single_node_certification(project)
    name = cert.stem.removeprefix("certification-")
    cause = {"reason": "FieldValueInvalid", "field": GPUS_FIELD, "message": "Invalid value: 8"}
    fake.reject[name] = (422, status(422, "Invalid", f"{name} is invalid", [cause]))
    shown = cert.relative_to(project).as_posix()
    line = line_of(cert, "gpusPerNode:")

    result = check()
    assert result.exit_code == 1
    assert f"{shown}:{line}:" in result.output
    assert "error[NVC640]: the API server rejects Certification" in result.output

    (found,) = diagnostics(check("--format", "json"))
    assert (found["file"], found["line"], found["code"]) == (shown, line, "NVC640")
    assert found["path"] == "/spec/categories/0/options/gpusPerNode"


def test_jobset_is_a_precondition_check_server_tests(project: Path, fake: FakeApiServer) -> None:
    """h20-3e-lab says dependencies.jobset.managed: false: JobSet must be installed already."""
    del fake.served["jobset.x-k8s.io/v1alpha2"]
    result = check("--format", "json")
    assert result.exit_code == 1
    (found,) = [d for d in diagnostics(result) if d["code"] == "NVC643"]
    assert found["file"] == f"out/{SITE}/platform/namespace-nvcre.yaml"
    assert "requires JobSet (jobset.x-k8s.io/v1alpha2), which is not served" in found["message"]
    assert {d["code"] for d in diagnostics(result)} == {"NVC643"}


def test_missing_crds_are_one_nvc641_per_object(project: Path, fake: FakeApiServer) -> None:
    del fake.served[NVCRE]
    result = check("--format", "json")
    assert result.exit_code == 1
    found = diagnostics(result)
    assert {d["code"] for d in found} == {"NVC641"}
    nvcre_files = [p for p in generated(project) if "nvcre.nvidia.com/" in p.read_text()]
    assert len(found) == len(nvcre_files) > 0
    assert all("nvcre.nvidia.com" not in p.body["apiVersion"] for p in fake.patches())


@pytest.mark.slow
def test_an_unreachable_server_is_one_diagnostic(project: Path) -> None:
    result = run(
        "check", "out", "--server", "down", "--kubeconfig", "kubeconfig", "--format", "json"
    )
    assert result.exit_code == 1
    (found,) = diagnostics(result)
    assert found["code"] == "NVC642"


def test_an_unknown_context_exits_2_naming_the_known_ones(project: Path) -> None:
    result = run("check", "out", "--server", "prod", "--kubeconfig", "kubeconfig")
    assert result.exit_code == 2
    assert "context 'prod' is not in kubeconfig; available contexts: ctx, down" in result.output


def test_kubeconfig_needs_server(project: Path) -> None:
    result = run("check", "out", "--kubeconfig", "kubeconfig")
    assert result.exit_code == 2
    assert "--kubeconfig needs --server CONTEXT" in result.output


def test_offline_stays_the_default(project: Path, fake: FakeApiServer) -> None:
    assert run("check", "out").exit_code == 0
    assert fake.received == []
