"""`nvcregen check` rejects each broken object the issue lists, naming the file and the rule.

Each case copies the committed out/ tree of the H20-3e site, breaks one object in one
way, and runs the real command line over it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.emit.canonical import dump_yaml

ROOT = Path(__file__).resolve().parent.parent
SITE = "h20-3e-lab"
Mutation = Callable[[dict[str, Any]], None]


def _options(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["categories"][0]["options"]  # type: ignore[no-any-return]


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return obj["spec"]["workloadMetadata"]["labels"]  # type: ignore[no-any-return]


CERTIFICATION_CASES: dict[str, tuple[Mutation, str]] = {
    "reserved workload label key": (
        lambda o: _labels(o).update({"nvcre.nvidia.com/owner": "x"}),
        "NVC610",
    ),
    "label-key prefix over 253 characters": (
        lambda o: _labels(o).update({("a" * 250) + ".example.com/k": "x"}),
        "NVC610",
    ),
    "timeoutPerJob: 90 minutes": (
        lambda o: _options(o).update(timeoutPerJob="90 minutes"),
        "NVC602",
    ),
    "storageSize: 10T": (lambda o: _options(o).update(storageSize="10T"), "NVC602"),
    "requests above limits": (
        lambda o: _options(o).update(resources={"requests": {"cpu": "8"}, "limits": {"cpu": "4"}}),
        "NVC610",
    ),
    "a negative quantity": (
        lambda o: _options(o).update(resources={"requests": {"memory": "-1Gi"}}),
        "NVC610",
    ),
    "a NIC resource in kubernetes.io/": (
        lambda o: o["spec"].update(nicResourceName="kubernetes.io/hca"),
        "NVC610",
    ),
    "an empty categories list": (lambda o: o["spec"].update(categories=[]), "NVC602"),
    "a reserved queue label key": (
        lambda o: o["spec"].update(
            gangScheduler={"schedulerName": "kai-scheduler", "queueLabelKey": "nvcre.nvidia.com/q"}
        ),
        "NVC610",
    ),
    "an unknown field": (lambda o: o["spec"].update(gpuPerNode=8), "NVC603"),
    "an invalid name": (lambda o: o["metadata"].update(name="Not_A_Name"), "NVC604"),
}

WORKLOADRUN_CASES: dict[str, tuple[Mutation, str]] = {
    "both script and module": (
        lambda o: o["spec"].update(framework={"torch": {"script": "a.py", "module": "a"}}),
        "NVC610",
    ),
    "an MPI framework without mpirunPath": (
        lambda o: o["spec"]["framework"]["mpi"].pop("mpirunPath"),
        "NVC602",
    ),
    "a config with both inline and configMapRef": (
        lambda o: o["spec"].update(config={"inline": {"a": "b"}, "configMapRef": {"name": "c"}}),
        "NVC610",
    ),
}


def _tree(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(ROOT / "out" / SITE, out / SITE)
    return out


def _check(out: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(out.parent)
    shutil.copytree(ROOT / "sites", out.parent / "sites")
    result = CliRunner().invoke(main, ["check", "out"])
    return result.exit_code, result.output


def _break(file: Path, mutation: Mutation) -> None:
    obj = yaml.safe_load(file.read_text())
    mutation(obj)
    file.write_text(dump_yaml(obj))


def _first(out: Path, pattern: str) -> Path:
    return sorted((out / SITE / "readiness").rglob(pattern))[0]


def test_the_committed_tree_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(_tree(tmp_path), monkeypatch)
    assert code == 0, output


@pytest.mark.parametrize("case", sorted(CERTIFICATION_CASES))
def test_a_broken_certification_is_rejected(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutation, code = CERTIFICATION_CASES[case]
    out = _tree(tmp_path)
    target = _first(out, "certification-*.yaml")
    _break(target, mutation)
    exit_code, output = _check(out, monkeypatch)
    assert exit_code == 1, output
    assert f"out/{SITE}/{target.relative_to(out / SITE).as_posix()}:" in output
    assert f"error[{code}]" in output


@pytest.mark.parametrize("case", sorted(WORKLOADRUN_CASES))
def test_a_broken_workloadrun_is_rejected(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutation, code = WORKLOADRUN_CASES[case]
    out = _tree(tmp_path)
    target = _first(out, "workloadrun-*nccl*.yaml")
    _break(target, mutation)
    exit_code, output = _check(out, monkeypatch)
    assert exit_code == 1, output
    assert f"out/{SITE}/{target.relative_to(out / SITE).as_posix()}:" in output
    assert f"error[{code}]" in output


def test_a_cel_failure_names_the_rule_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _tree(tmp_path)
    _break(_first(out, "workloadrun-*nccl*.yaml"), WORKLOADRUN_CASES["both script and module"][0])
    _, output = _check(out, monkeypatch)
    assert "script and module are mutually exclusive" in output
