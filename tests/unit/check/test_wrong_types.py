"""`nvcregen check` on a hand-edited tree whose objects hold fields of the wrong type.

A user may edit `out/<site>/` before GitOps syncs it. An object whose `spec` is a list, a
string, a number or null is reported by the schema check (NVC602); every later check must
skip what it cannot read, never stop with "internal error" (exit 70).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nvcregen.check.collisions import SiteObjects, check_collisions
from nvcregen.check.crossref import Located
from nvcregen.check.required import REQUIRED, required_findings
from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.core.kube import api_group

ROOT = Path(__file__).resolve().parents[3]
SITES = ("h20-3e-lab", "h20-3e-trainer", "l20-pool")
FIELDS = ("spec", "metadata", "status", "data")
WRONG: dict[str, Any] = {"a list": ["x", 1], "a string": "text", "a number": 7, "null": None}
# Kubernetes reads these as absent, and each is optional: null is no problem there
NULL_IS_ABSENT = frozenset({("ConfigMap", "data")})
# a chart's values: any JSON, to the schema and the API server alike (Helm reads them)
FREE_FORM = frozenset({("HelmRelease", ("spec", "values"))})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example sites and their rendered trees."""
    project = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "sites", project / "sites")
    for site in SITES:
        shutil.copytree(ROOT / "out" / site, project / "out" / site)
    return project


def check(project: Path, monkeypatch: pytest.MonkeyPatch, tree: str = "out") -> tuple[int, str]:
    """`nvcregen check TREE` in this process: its exit code, and what it printed.

    An exception is what `cli.entrypoint` reports as an internal error, exit 70.
    """
    monkeypatch.chdir(project)
    done = CliRunner().invoke(main, ["check", tree])
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        failed = "".join(traceback.format_exception(done.exception))
        return ExitCode.INTERNAL, f"internal error: {failed}"
    return done.exit_code, done.stderr + done.stdout


def edit(path: Path, field: str, value: Any) -> str:
    """Set one top-level field of the object in `path`; return the file's text before."""
    text = path.read_text()
    obj = yaml.safe_load(text)
    obj[field] = value
    path.write_text(yaml.safe_dump(obj, sort_keys=False))
    return text


def mutations() -> Iterator[tuple[str, Path, str, str]]:
    """(site, file, kind, field) to edit: each field but metadata of the first object of each
    kind of each example site; metadata of each site's first object only (metadata of another
    type makes the file no object at all, whatever its kind: NVC600 before any check reads it).
    """
    for site in SITES:
        seen: set[str] = set()
        for path in sorted((ROOT / "out" / site).rglob("*.yaml")):
            obj = yaml.safe_load(path.read_text())
            kind = str(obj["kind"])
            if kind in seen:
                continue
            fields = [f for f in FIELDS if f in obj and (f != "metadata" or not seen)]
            seen.add(kind)
            yield from ((site, path.relative_to(ROOT), kind, field) for field in fields)


def test_the_accessors_read_only_the_shape_expected() -> None:
    obj = {"spec": {"template": {"spec": {"containers": [1]}}, "list": [2], "text": "x"}}
    assert mapping_at(obj, "spec", "template") == {"spec": {"containers": [1]}}
    assert mapping_at(obj) == obj
    assert mapping_at(obj, "spec", "list") is None
    assert mapping_at(obj, "spec", "list", "x") is None
    assert mapping_at(obj, "spec", "text", "x") is None
    assert mapping_at(obj, "missing") is None
    assert mapping_at(["spec"], "spec") is None
    assert mapping_at(None) is None
    assert list_at(obj, "spec", "template", "spec", "containers") == [1]
    assert list_at(obj, "spec", "list") == [2]
    assert list_at(obj, "spec", "text") == []
    assert list_at(obj, "spec", "text", "x") == []
    assert list_at(obj, "spec") == []
    assert list_at([3]) == [3]
    assert list_at({"spec": [4]}, "spec", "x") == []


@pytest.mark.parametrize("value", list(WRONG.values()), ids=list(WRONG))
def test_a_certification_whose_spec_is_no_mapping_is_reported(
    project: Path, monkeypatch: pytest.MonkeyPatch, value: Any
) -> None:
    """The review's case: NVC602 was printed, then crossref.py stopped with an internal error."""
    victim = next((project / "out" / "h20-3e-lab" / "readiness").rglob("certification-*.yaml"))
    text = edit(victim, "spec", value)
    try:
        code, output = check(project, monkeypatch)
    finally:
        victim.write_text(text)
    assert "internal error" not in output
    assert code == 1
    assert "error[NVC602]" in output


def test_the_example_trees_check_clean(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the systematic test below edits is clean before it is edited."""
    code, output = check(project, monkeypatch)
    assert (code, output.strip().splitlines()[-1]) == (0, "nvcregen: no problems; checked out/")


@pytest.mark.parametrize("value", list(WRONG.values()), ids=list(WRONG))
def test_sites_sharing_a_cluster_read_a_release_whose_spec_is_no_mapping(value: Any) -> None:
    """NVC690 asks each GitOps engine which Helm release an object installs (`helm_release`):
    a HelmRelease or an Application whose spec is no mapping names its release by its name,
    or installs none, and the two sites' copies collide as objects."""
    release: dict[str, Any] = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease"}
    release |= {"metadata": {"name": "kueue", "namespace": "kueue-system"}, "spec": value}
    app: dict[str, Any] = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"}
    app |= {"metadata": {"name": "lab-kueue", "namespace": "argocd"}, "spec": value}
    objects = (Located("a.yaml", release), Located("b.yaml", app))
    sites = [SiteObjects(site, "gpu-prod", objects) for site in ("lab-a", "lab-b")]
    found = sorted(
        {(file, f.code, f.message.split(" is ")[0]) for _, file, f in check_collisions(sites)}
    )
    assert found == [
        ("a.yaml", "NVC690", "Helm release kueue (in kueue-system)"),
        ("a.yaml", "NVC690", "HelmRelease kueue-system/kueue"),
        ("b.yaml", "NVC690", "Application argocd/lab-kueue"),
    ]


@pytest.mark.parametrize(("api", "kind"), [(f"{g}/v1" if g else "v1", k) for g, k in REQUIRED])
def test_a_pod_or_workload_without_a_spec_is_refused_as_the_api_server_would(
    api: str, kind: str
) -> None:
    """NVC366: the schemas let `spec` be null or missing; the API server's validation does not."""
    obj: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}}
    assert [(f.code, f.pointer) for f in required_findings(obj)] == [("NVC366", "/spec")]
    null = required_findings({**obj, "spec": None})
    assert [f.message for f in null] == [
        f"this {kind} has no spec: the API server refuses it ({REQUIRED[(api_group(api), kind)]}:"
        " Required value)"
    ]
    assert required_findings({**obj, "spec": {}}) == []  # the schema names what it lacks
    assert required_findings({**obj, "spec": ["x"]}) == []  # the schema's NVC602
    assert required_findings({**obj, "apiVersion": "example.com/v1"}) == []


def test_kinds_whose_spec_is_optional_have_none_required() -> None:
    for obj in (
        {"apiVersion": "v1", "kind": "Service"},
        {"apiVersion": "v1", "kind": "ConfigMap", "data": None},
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"},
        {"apiVersion": "batch/v1", "kind": "Pod"},
    ):
        assert required_findings(obj) == []


def test_a_job_whose_spec_is_null_is_reported_at_its_line(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one edit of the example trees the schema check let through (trainer mode's Jobs)."""
    site = project / "out" / "h20-3e-trainer"
    victim = next((site / "readiness").rglob("job-*.yaml"))
    text = edit(victim, "spec", None)
    line = 1 + victim.read_text().splitlines().index("spec: null")
    try:
        code, output = check(project, monkeypatch, "out/h20-3e-trainer")
    finally:
        victim.write_text(text)
    assert code == 1
    assert "error[NVC366]: this Job has no spec: the API server refuses it" in output
    assert f"{victim.relative_to(project).as_posix()}:{line}:" in output


@pytest.mark.slow
def test_every_kind_with_a_field_of_the_wrong_type_is_reported_never_an_internal_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind of each example site, its spec/status/data (and metadata), each wrong type."""
    failed = []
    tried = Counter[str]()
    for site, relative, kind, field in mutations():
        victim = project / relative
        for shape, value in WRONG.items():
            text = edit(victim, field, value)
            try:
                code, output = check(project, monkeypatch, f"out/{site}")
            finally:
                victim.write_text(text)
            tried[field] += 1
            expected = {1}
            if value is None and (kind, field) in NULL_IS_ABSENT:
                expected = {0, 1}  # what its absence means to other objects is theirs to say
            said = "error[NVC600]" if field == "metadata" else "error[NVC602]"
            if value is None:
                said = "error[" if expected == {1} else ""
            if code not in expected or said not in output or "internal error" in output:
                failed.append(f"{site} {kind} {field} as {shape}: exit {code}\n{output[-600:]}")
    assert tried["metadata"] == 4 * len(SITES)
    assert tried["spec"] > 100  # every site's kinds, not a few
    assert tried["data"]  # ConfigMaps (nvcregen writes no status: none is edited)
    assert not failed, "\n".join(failed)


def nested(value: Any, path: tuple[str | int, ...], depth: int) -> Iterator[tuple[str | int, ...]]:
    """Paths of the mappings and lists below `value`, down to `depth` more steps."""
    steps: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        steps = list(value.items())
    elif isinstance(value, list):
        steps = list(enumerate(value[:1]))
    for key, below in steps:
        if depth and isinstance(below, (dict, list)):
            yield (*path, key)
            yield from nested(below, (*path, key), depth - 1)


def put(obj: Any, path: tuple[str | int, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


@pytest.mark.slow
def test_a_nested_field_of_the_wrong_type_is_reported_never_an_internal_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each mapping or list up to eight steps below spec (`spec.template.spec`, `spec.target`)
    of the first object of each kind, once per kind and path over the example sites, made a
    number: the schema reports it (NVC602), the replay and every other check read it as absent.
    """
    failed = []
    seen: set[tuple[str, tuple[str | int, ...]]] = set()
    for site, relative, kind, field in mutations():
        victim = project / relative
        text = victim.read_text()
        obj = yaml.safe_load(text)
        if field != "spec" or not isinstance(obj.get("spec"), dict):
            continue
        for path in nested(obj["spec"], ("spec",), 8):
            if (kind, path) in seen or (kind, path[:2]) in FREE_FORM:
                continue
            seen.add((kind, path))
            edited = yaml.safe_load(text)
            put(edited, path, 7)
            victim.write_text(yaml.safe_dump(edited, sort_keys=False))
            try:
                code, output = check(project, monkeypatch, f"out/{site}")
            finally:
                victim.write_text(text)
            if code != 1 or "error[NVC602]" not in output or "internal error" in output:
                failed.append(f"{site} {kind} {path}: exit {code}\n{output[-600:]}")
    assert not failed, "\n".join(failed)
    assert len(seen) > 150  # every kind's nested fields, not a few


@pytest.mark.slow
def test_check_end_to_end_reports_a_list_spec_without_an_internal_error(tmp_path: Path) -> None:
    """The command in a process of its own, on a tree with an Application's spec a list."""
    shutil.copytree(ROOT / "sites", tmp_path / "sites")
    shutil.copytree(ROOT / "out" / "h20-3e-lab", tmp_path / "out" / "h20-3e-lab")
    victim = next((tmp_path / "out" / "h20-3e-lab" / "gitops").glob("application-*.yaml"))
    edit(victim, "spec", ["a", "list"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NVCREGEN_DEBUG", None)
    done = subprocess.run(
        [sys.executable, "-m", "nvcregen", "check", "out"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == 1
    shown = victim.relative_to(tmp_path).as_posix()
    assert f"{shown}:" in done.stdout + done.stderr
    assert "error[NVC602]" in done.stdout + done.stderr
