"""`nvcregen check` on hostile trees (issue #14, items 7, 9 and 10).

Secrets in a generated tree are found (NVC669) and masked; an alias bomb fails at once
at bounded cost; a file with thousands of problems prints at most 200 of them.
"""

from __future__ import annotations

import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from timebounds import HANG

from nvcregen.check.policy import check_policies
from nvcregen.cli import main
from nvcregen.commands.diagnostics import MAX_PER_FILE

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "ghp_" + "Zz09" * 9
BOMB = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
    '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"  {n}: &{n} [{','.join([f'*{p}'] * 9)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["check", *args])
    return done.exit_code, done.stderr + done.stdout


def test_the_policy_finds_secrets_in_any_string_of_an_object() -> None:
    obj = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "x", "annotations": {"note": f"token {TOKEN}"}},
        "spec": {"source": {"repoURL": "https://u:p4ss@git.example.com/r.git"}},
    }
    found = [(f.code, f.pointer) for f in check_policies(obj) if f.code == "NVC669"]
    assert found == [("NVC669", "/metadata/annotations/note"), ("NVC669", "/spec/source/repoURL")]
    assert check_policies({"kind": "ConfigMap", "data": {"a": "b"}}) == []


def test_check_reports_and_masks_a_secret_in_a_generated_tree(project: Path) -> None:
    shutil.copytree(ROOT / "out" / "h20-3e-lab", project / "out" / "h20-3e-lab")
    shutil.copytree(ROOT / "sites", project / "sites")
    victim = next((project / "out" / "h20-3e-lab" / "gitops").glob("application-*.yaml"))
    text = victim.read_text()
    victim.write_text(
        text.replace("https://git.example.com", "https://bot:hunter22@git.example.com")
    )
    code, output = check("out")
    assert code == 1
    assert "error[NVC669]: this string holds a password in a URL" in output
    assert "hunter22" not in output


def test_an_alias_bomb_fails_fast_with_its_line(project: Path) -> None:
    (project / "out" / "x").mkdir(parents=True)
    (project / "out" / "x" / "bomb.yaml").write_text(BOMB)
    assert len(BOMB) < 500
    tracemalloc.start()
    started = time.perf_counter()
    try:
        code, output = check("out")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < HANG  # a hang guard, not a speed target
    assert peak < 64 * 1024 * 1024
    assert code == 1
    assert "out/x/bomb.yaml:5:6: error[NVC105]: anchor &a is not allowed" in output


@pytest.mark.slow
def test_thousands_of_problems_in_one_file_print_at_most_200(project: Path) -> None:
    (project / "out" / "x").mkdir(parents=True)
    data = "".join(f'  k{i}: "rate_gbps_{i}"\n' for i in range(1000))
    (project / "out" / "x" / "cm.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x}}\ndata:\n{data}"
    )
    code, output = check("out")
    assert code == 1
    assert output.count("error[NVC620]") == MAX_PER_FILE
    assert f"info[NVC001]: 800 more diagnostics in this file not shown (at most {MAX_PER_FILE}" in (
        output
    )
    assert "nvcregen: 1000 errors in 1 file" in output  # the summary counts them all
    assert len(output) < 200_000


def _edited_tree(project: Path, old: str, new: str) -> Path:
    shutil.copytree(ROOT / "out" / "h20-3e-lab", project / "out" / "h20-3e-lab")
    shutil.copytree(ROOT / "sites", project / "sites")
    victim = next((project / "out" / "h20-3e-lab" / "readiness").rglob("certification-*.yaml"))
    text = victim.read_text()
    assert old in text
    victim.write_text(text.replace(old, new, 1))
    return victim


def test_a_plain_date_in_an_object_is_its_text_as_kubectl_reads_it(project: Path) -> None:
    """A YAML 1.1 timestamp became a `date` that no JSON step could handle: an internal error."""
    _edited_tree(project, "\n  name: ", "\n  labels2: 2024-01-01\n  name: ")
    code, output = check("out")
    assert code == 1
    assert 'metadata.labels2: unknown field "labels2"' in output
    assert "internal error" not in output


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("kind: Certification", "kind: [Certification]", "kind is a list, not a string"),
        ("apiVersion: nvcre", "apiVersion: {a: 1}\nx: nvcre", "apiVersion is a mapping"),
        ("metadata:\n", "metadata: 7\nx:\n", "metadata is a number, not a mapping"),
        ("  labels:\n", "  labels: [a]\n  x:\n", "metadata.labels is a list, not a mapping"),
        ("  annotations:\n", "  annotations: 5\n  x:\n", "metadata.annotations is a number"),
    ],
)
def test_an_object_whose_kind_or_metadata_has_the_wrong_shape_is_no_object(
    project: Path, old: str, new: str, why: str
) -> None:
    _edited_tree(project, old, new)
    code, output = check("out")
    assert code == 1
    assert f"error[NVC600]: not a Kubernetes object ({why}" in output
    assert "internal error" not in output


def test_a_tag_with_no_json_form_is_refused(project: Path) -> None:
    _edited_tree(project, "namespace: nvcre", "namespace: !!binary aGVsbG8=")
    code, output = check("out")
    assert code == 1
    assert "YAML tag !!binary is not allowed" in output
