"""Tests of Helm rendering for the platform layer (nvcregen.compile.platform.helm)."""

from __future__ import annotations

import importlib
import shutil
import stat
import textwrap
from pathlib import Path
from typing import Any

import pytest
from chartfactory import package
from sitefactory import load

from nvcregen.compile.platform.helm import (
    BinaryRenderer,
    HelmError,
    HelmRenderer,
    RenderedChart,
    SdkRenderer,
    archive_crds,
    archive_sha256,
    helm_kube_version,
    parse_documents,
    select_renderer,
    verify_archive,
)
from nvcregen.core.errors import Severity

DIGEST = "sha256:" + "ab" * 32


def _sdk() -> Any:
    try:
        return importlib.import_module("helm_python")
    except (ImportError, OSError) as exc:
        pytest.skip(
            f"helm-python-sdk cannot be imported here ({exc}); install it with "
            "pip install 'nvcregen[helm]' to run the in-process Helm 4 render tests"
        )


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return package(tmp_path_factory.mktemp("chart"))


def _render(renderer: HelmRenderer, archive: Path, values: dict[str, Any]) -> RenderedChart:
    return renderer.render(archive, "nvcre", "nvcre", values, "1.30")


def test_the_packaged_chart_is_byte_for_byte_reproducible(tmp_path: Path, archive: Path) -> None:
    again = package(tmp_path)
    assert again.read_bytes() == archive.read_bytes()
    assert archive_sha256(again) == archive_sha256(archive)


def test_a_matching_pin_is_accepted(archive: Path) -> None:
    pin = archive_sha256(archive)
    assert verify_archive(archive, pin, "chart.tgz") == pin


def test_a_mismatched_pin_is_refused_naming_both_hashes(archive: Path) -> None:
    with pytest.raises(HelmError) as caught:
        verify_archive(archive, DIGEST, "chart.tgz")
    error = caught.value
    assert error.code == "NVC401"
    assert DIGEST in error.message
    assert archive_sha256(archive) in error.message
    assert error.pointer == "/spec/nvcre/chart/sha256"


def test_an_unpinned_archive_is_refused_with_its_hash(archive: Path) -> None:
    with pytest.raises(HelmError) as caught:
        verify_archive(archive, None, "chart.tgz")
    assert caught.value.code == "NVC401"
    assert archive_sha256(archive) in caught.value.hint


def test_a_missing_archive_is_nvc402(tmp_path: Path) -> None:
    with pytest.raises(HelmError) as caught:
        verify_archive(tmp_path / "nope.tgz", DIGEST, "charts/nope.tgz")
    assert caught.value.code == "NVC402"
    assert "charts/nope.tgz" in caught.value.message


def test_a_helm_error_becomes_a_diagnostic_at_the_site_line() -> None:
    text = "spec:\n  nvcre:\n    chart:\n      archive: x.tgz\n"
    diag = HelmError("NVC402", "chart archive x.tgz does not exist").diagnostic(load(text))
    assert (diag.code, diag.severity, diag.span.line) == ("NVC402", Severity.ERROR, 4)
    assert diag.path == "/spec/nvcre/chart/archive"


def test_kube_versions_are_written_the_way_helm_wants() -> None:
    assert helm_kube_version("1.30") == "v1.30.0"
    assert helm_kube_version("v1.31.2") == "v1.31.2"


def test_rendered_yaml_is_read_as_yaml_1_1_like_kubernetes() -> None:
    docs = parse_documents("a: on\nb: 0755\n---\n# only a comment\n---\nc: yes\nd: 2024-01-02\n")
    assert docs == [{"a": True, "b": 493}, {"c": True, "d": "2024-01-02"}]


@pytest.mark.slow
def test_crds_are_read_from_the_chart_and_unpacked_subcharts_only(tmp_path: Path) -> None:
    texts = archive_crds(package(tmp_path))
    names = sorted(doc["metadata"]["name"] for t in texts for doc in parse_documents(t))
    assert names == [
        "bandwidthmeasurements.nvcre.nvidia.com",
        "certifications.nvcre.nvidia.com",
        "goodputmeasurements.nvcre.nvidia.com",
        "logprofiles.nvcre.nvidia.com",
        "reportexportpolicies.nvcre.nvidia.com",
        "reportexports.nvcre.nvidia.com",
        "workloadruns.nvcre.nvidia.com",
    ]


# --- choosing a renderer ---------------------------------------------------------------


def _no_module(name: str) -> Any:
    raise ImportError(name)


def test_the_sdk_is_preferred_when_it_imports() -> None:
    chosen = select_renderer(import_module=lambda _: object(), which=lambda _: "/usr/bin/helm")
    assert isinstance(chosen, SdkRenderer)


def test_the_helm_binary_is_used_without_the_sdk() -> None:
    chosen = select_renderer(import_module=_no_module, which=lambda _: "/opt/helm")
    assert isinstance(chosen, BinaryRenderer)
    assert chosen.command(Path("c.tgz"), "r", "ns", Path("v.json"), "1.30")[0] == "/opt/helm"


def test_no_renderer_at_all_is_none() -> None:
    assert select_renderer(import_module=_no_module, which=lambda _: None) is None


# --- the helm binary (a stand-in records how it is called) ------------------------------

FAKE_OUTPUT = """\
---
# Source: cluster-readiness-engine/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: nvcre-manager
---
# Source: cluster-readiness-engine/templates/preflight-hook.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: nvcre-preflight
  annotations:
    helm.sh/hook: pre-install
"""


def _fake_helm(tmp_path: Path, *, exit_code: int = 0) -> Path:
    script = tmp_path / "helm"
    script.write_text(
        textwrap.dedent(f"""\
            #!/bin/sh
            printf '%s\\n' "$@" > "{tmp_path}/argv"
            while [ $# -gt 0 ]; do
              [ "$1" = --values ] && cp "$2" "{tmp_path}/values.json"
              shift
            done
            if [ {exit_code} -ne 0 ]; then echo 'Error: parse error in deployment.yaml' >&2; \
exit {exit_code}; fi
            cat "{tmp_path}/output.yaml"
            """),
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "output.yaml").write_text(FAKE_OUTPUT, encoding="utf-8")
    return script


@pytest.mark.slow
def test_the_binary_runs_helm_template_without_crds_or_hooks(tmp_path: Path, archive: Path) -> None:
    renderer = BinaryRenderer(str(_fake_helm(tmp_path)))
    rendered = _render(renderer, archive, {"nameOverride": "nvcre"})
    argv = (tmp_path / "argv").read_text().split("\n")
    assert argv[:4] == ["template", "nvcre", str(archive), "--namespace"]
    assert {"--skip-crds", "--no-hooks"} <= set(argv)
    assert argv[argv.index("--kube-version") + 1] == "v1.30.0"
    assert (tmp_path / "values.json").read_text() == '{"nameOverride": "nvcre"}'
    assert [m["kind"] for m in rendered.manifests] == ["ServiceAccount"]  # the hook is dropped
    assert len(rendered.crds) == 7  # read from the archive's crds/, not from helm


def test_a_failing_helm_binary_is_nvc405_with_its_message(tmp_path: Path, archive: Path) -> None:
    renderer = BinaryRenderer(str(_fake_helm(tmp_path, exit_code=1)))
    with pytest.raises(HelmError) as caught:
        _render(renderer, archive, {})
    assert caught.value.code == "NVC405"
    assert "parse error in deployment.yaml" in caught.value.message


def test_the_real_helm_binary_renders_the_chart(archive: Path) -> None:
    helm = shutil.which("helm")
    if helm is None:
        pytest.skip("no helm binary on PATH (Debian does not package helm); see the SDK tests")
    rendered = _render(BinaryRenderer(helm), archive, {})
    kinds = sorted(m["kind"] for m in rendered.manifests)
    assert "Job" not in kinds
    assert "Deployment" in kinds


# --- the Helm SDK (in-process Helm 4) -----------------------------------------------------


@pytest.mark.slow
def test_the_sdk_drops_hooks_and_notes_and_splits_crds(archive: Path) -> None:
    rendered = _render(SdkRenderer(_sdk()), archive, {})
    kinds = sorted(m["kind"] for m in rendered.manifests)
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
    ]
    assert all(m["kind"] != "CustomResourceDefinition" for m in rendered.manifests)
    assert {c["kind"] for c in rendered.crds} == {"CustomResourceDefinition"}
    assert len(rendered.crds) == 7


def test_the_sdk_passes_values_and_the_kube_version(tmp_path: Path) -> None:
    chart = tmp_path / "tiny"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: tiny\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
        "data:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n"
        "  x: {{ .Values.x | quote }}\n"
    )
    rendered = SdkRenderer(_sdk()).render(chart, "demo", "ns", {"x": "y"}, "1.31")
    assert rendered.manifests == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "demo"},
            "data": {"kube": "v1.31.0", "x": "y"},
        }
    ]


def test_a_template_error_in_the_sdk_is_nvc405(tmp_path: Path) -> None:
    chart = tmp_path / "broken"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 0.1.0\n")
    (chart / "templates" / "x.yaml").write_text('{{ required "x is required" .Values.x }}\n')
    with pytest.raises(HelmError) as caught:
        SdkRenderer(_sdk()).render(chart, "demo", "ns", {}, "1.30")
    assert caught.value.code == "NVC405"
    assert "x is required" in caught.value.message
