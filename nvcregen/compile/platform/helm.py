"""Render a pinned Helm chart archive offline, without hooks or NOTES, CRDs kept apart.

Two renderers sit behind one small protocol, and `select_renderer()` picks one:

- `SdkRenderer`: Helm 4 in-process through the `helm-python-sdk` package (the optional
  extra `nvcregen[helm]`), which embeds Helm's Go SDK as a shared library. Nothing is
  contacted; `lookup` returns nothing.
- `BinaryRenderer`: the `helm` command on PATH, run as `helm template --skip-crds
  --no-hooks --kube-version ...` with the values in a temporary file; CRDs are read
  from the archive's `crds/` folders, not from Helm's output.

Both give the same `RenderedChart`: hooks (any object annotated `helm.sh/hook`) and
NOTES.txt are dropped, CRDs are returned apart from the other objects, and objects are
sorted so either renderer yields the same list. Before rendering, `verify_archive`
checks the archive's sha256 against the site's pin.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ruamel.yaml import YAML

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.manifest import Obj
from nvcregen.spec.positions import Document

HOOK_ANNOTATION = "helm.sh/hook"
SDK_PACKAGE = "helm_python"
HELM_TIMEOUT_S = 300  # `helm template` of a local archive takes seconds; never hang a run
INSTALL_HINT = (
    "install the Helm SDK (pip install 'nvcregen[helm]') or put the helm binary on PATH; "
    "or remove nvcre.chart.archive to reference the chart from its registry instead"
)


@dataclass(frozen=True)
class RenderedChart:
    """The objects a chart renders to, with its CRDs (from `crds/`) kept apart."""

    manifests: list[Obj]
    crds: list[Obj]


class HelmRenderer(Protocol):
    """Renders a chart archive the way `helm template` would, for one release."""

    name: str

    def render(
        self,
        chart_archive: Path,
        release: str,
        namespace: str,
        values: dict[str, Any],
        kube_version: str,
    ) -> RenderedChart:
        """Render `chart_archive` as `release` in `namespace` for Kubernetes `kube_version`."""
        ...


class HelmError(Exception):
    """A chart cannot be used; becomes a diagnostic at `pointer` in the site file."""

    def __init__(
        self,
        code: str,
        message: str,
        pointer: str = "/spec/nvcre/chart/archive",
        hint: str = "",
        notes: tuple[str, ...] = (),
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.pointer = pointer
        self.hint = hint
        self.notes = notes

    def diagnostic(self, doc: Document) -> Diagnostic:
        """The error as a diagnostic pointing at the site line it is about."""
        return Diagnostic(
            doc.span(self.pointer),
            Severity.ERROR,
            self.code,
            self.message,
            self.pointer,
            self.hint,
            self.notes,
        )


def archive_sha256(path: Path) -> str:
    """Return `sha256:<hex>` of a file's bytes (what `sha256sum` prints, prefixed)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def verify_archive(path: Path, pinned: str | None, shown: str) -> str:
    """Check that a chart archive exists and has the pinned sha256; return its digest.

    Raises:
        HelmError: NVC402 when the file is missing, NVC401 when its hash differs from
            the pin or there is no pin (both name the hash the file has).

    """
    if not path.is_file():
        raise HelmError(
            codes.NVC402.code,
            f"chart archive {shown} does not exist",
            hint="fetch it with `helm pull <ref> --version <version>` next to the site file",
        )
    actual = archive_sha256(path)
    if pinned is None:
        raise HelmError(
            codes.NVC401.code,
            f"chart archive {shown} is not pinned: its sha256 is {actual}",
            hint=f"add `sha256: {actual}` under nvcre.chart once you trust this file",
        )
    if pinned != actual:
        raise HelmError(
            codes.NVC401.code,
            f"chart archive {shown} has sha256 {actual}, but the site pins {pinned}",
            "/spec/nvcre/chart/sha256",
            hint="the archive changed since it was pinned: check where it came from",
        )
    return actual


class SdkRenderer:
    """Helm 4 in-process, through `helm-python-sdk` (ctypes over Helm's Go SDK)."""

    name = "helm-python-sdk"

    def __init__(self, module: Any) -> None:
        self._helm = module

    def render(
        self,
        chart_archive: Path,
        release: str,
        namespace: str,
        values: dict[str, Any],
        kube_version: str,
    ) -> RenderedChart:
        """Render with Helm's engine in this process; see `HelmRenderer.render`."""
        helm = self._helm
        # `Chart.render` has no kube_version argument, but the library's render call takes
        # it in its options (as `helm template --kube-version` does), so call it directly.
        options = {
            "name": release,
            "namespace": namespace,
            "kube_version": helm_kube_version(kube_version),
            "is_install": True,
        }
        try:
            with helm.Chart.load(str(chart_archive)) as chart:
                raw = helm._native.call_string(
                    "helm_render", chart._raw(), json.dumps(values), json.dumps(options)
                )
                crd_files = [str(item["data"]) for item in chart.crds]
        except helm.HelmError as exc:
            raise render_failed(self.name, str(exc)) from exc
        rendered: dict[str, str] = json.loads(raw)
        documents = [
            text for path, text in sorted(rendered.items()) if not _is_notes(PurePosixPath(path))
        ]
        return finish(documents, crd_files)


class BinaryRenderer:
    """The `helm` command: `helm template --skip-crds --no-hooks`, CRDs read from the archive."""

    name = "helm"

    def __init__(self, executable: str) -> None:
        self._helm = executable

    def command(
        self, chart_archive: Path, release: str, namespace: str, values_file: Path, kube: str
    ) -> list[str]:
        """The argument list `render` runs."""
        return [
            self._helm,
            "template",
            release,
            str(chart_archive),
            "--namespace",
            namespace,
            "--kube-version",
            helm_kube_version(kube),
            "--skip-crds",
            "--no-hooks",
            "--values",
            str(values_file),
        ]

    def render(
        self,
        chart_archive: Path,
        release: str,
        namespace: str,
        values: dict[str, Any],
        kube_version: str,
    ) -> RenderedChart:
        """Run `helm template`; see `HelmRenderer.render`."""
        with tempfile.TemporaryDirectory(prefix="nvcregen-helm-") as tmp:
            values_file = Path(tmp) / "values.json"  # JSON is YAML, and needs no dumper
            values_file.write_text(json.dumps(values), encoding="utf-8")
            argv = self.command(chart_archive, release, namespace, values_file, kube_version)
            try:
                done = subprocess.run(
                    argv, capture_output=True, text=True, check=False, timeout=HELM_TIMEOUT_S
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise render_failed(self.name, str(exc)) from exc
        if done.returncode != 0:
            raise render_failed(self.name, done.stderr.strip() or f"exit {done.returncode}")
        return finish([done.stdout], archive_crds(chart_archive))


def select_renderer(
    *,
    import_module: Callable[[str], Any] = importlib.import_module,
    which: Callable[[str], str | None] = shutil.which,
) -> HelmRenderer | None:
    """Pick a renderer: the Helm SDK when installed, else `helm` on PATH, else None.

    The SDK comes first: it is pinned by nvcregen's own dependency range, while a `helm`
    on PATH is whatever version the machine has.
    """
    try:
        module = import_module(SDK_PACKAGE)
    except (ImportError, OSError):  # not installed, or its shared library cannot load
        module = None
    if module is not None:
        return SdkRenderer(module)
    executable = which("helm")
    return BinaryRenderer(executable) if executable else None


def no_renderer() -> HelmError:
    """NVC403: a chart archive is to be rendered but no renderer is available."""
    return HelmError(
        codes.NVC403.code,
        "nvcre.chart.archive is set, but neither helm-python-sdk nor a helm binary is available",
        hint=INSTALL_HINT,
    )


def render_failed(renderer: str, detail: str) -> HelmError:
    """NVC405: the renderer ran and failed (a template error, a bad archive)."""
    first = detail.splitlines()[0] if detail else "no output"
    return HelmError(
        codes.NVC405.code,
        f"rendering the chart archive with {renderer} failed: {first}",
        notes=tuple(detail.splitlines()[1:20]),
    )


def helm_kube_version(version: str) -> str:
    """Helm's form of a Kubernetes minor version: `1.30` -> `v1.30.0`."""
    return f"v{version}.0" if version.count(".") == 1 else f"v{version.lstrip('v')}"


def archive_crds(chart_archive: Path) -> list[str]:
    """The text of every file in the chart's `crds/` folders (its own and unpacked subcharts')."""
    texts: list[str] = []
    with tarfile.open(chart_archive, "r:gz") as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            parts = PurePosixPath(member.name).parts
            if member.isfile() and _is_crd_file(parts):
                stream = archive.extractfile(member)
                if stream is not None:
                    texts.append(stream.read().decode("utf-8"))
    return texts


def _is_crd_file(parts: tuple[str, ...]) -> bool:
    """`<chart>/crds/x.yaml` or `<chart>/charts/<sub>/crds/x.yaml`, as Helm reads them."""
    if len(parts) < 3 or parts[-2] != "crds" or not parts[-1].endswith((".yaml", ".yml", ".json")):
        return False
    middle = parts[1:-2]
    return not middle or (len(middle) % 2 == 0 and all(p == "charts" for p in middle[::2]))


def finish(documents: Iterable[str], crd_files: Iterable[str]) -> RenderedChart:
    """Parse rendered text and CRD files; drop hooks and empty documents; sort both."""
    objects = [obj for text in documents for obj in parse_documents(text)]
    manifests = [obj for obj in objects if not is_hook(obj)]
    crds = [obj for text in crd_files for obj in parse_documents(text)]
    return RenderedChart(sorted(manifests, key=object_key), sorted(crds, key=object_key))


def parse_documents(text: str) -> list[Obj]:
    """Every mapping in a YAML stream, read as YAML 1.1 like Kubernetes and Helm do."""
    loader = YAML(typ="safe")  # libyaml when present; same YAML 1.1 reading as pure
    loaded = loader.load_all("%YAML 1.1\n---\n" + text)
    return [_plain(doc) for doc in loaded if isinstance(doc, dict) and doc]


def _plain(value: Any) -> Any:
    """Turn YAML 1.1 timestamps back into strings, as Kubernetes would read them."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return value


def is_hook(obj: Obj) -> bool:
    """Whether an object is a Helm hook (runs at install time, not part of the release)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return HOOK_ANNOTATION in annotations


def object_key(obj: Obj) -> tuple[str, str, str, str]:
    """Sort key: apiVersion, kind, namespace, name."""
    metadata = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(metadata.get("namespace", "")),
        str(metadata.get("name", "")),
    )


def _is_notes(path: PurePosixPath) -> bool:
    return path.name == "NOTES.txt"
