"""Platform test helpers: the NVCRE-shaped test chart as a .tgz, and sites that use it.

The chart's templates live in `tests/fixtures/charts/cluster-readiness-engine/`; its
`crds/` folder is filled here from the vendored NVCRE CRDs (`schemas/upstream/nvcre/
v0.7.0/`, the derived copies replacing the verbatim ones of the same name, as the
vendoring tool does), so no binary and no second copy of the CRDs is committed. Same
inputs, same bytes: members are sorted, and owners, modes and times are fixed.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from sitefactory import IMAGES, edit, load, site_yaml

from nvcregen.spec.parse import parse_model
from nvcregen.spec.v1alpha1 import Site

ROOT = Path(__file__).resolve().parent.parent
CHART_DIR = ROOT / "tests" / "fixtures" / "charts" / "cluster-readiness-engine"
CHART_NAME = "cluster-readiness-engine"
NVCRE_CRDS = ROOT / "schemas" / "upstream" / "nvcre" / "v0.7.0"
JOBSET_CRD = (
    ROOT / "schemas" / "upstream" / "jobset" / "v0.11.0" / "crds" / ("jobset.x-k8s.io_jobsets.yaml")
)


def nvcre_crd_files() -> dict[str, bytes]:
    """The NVCRE CRD files a 0.7.0 chart ships, by file name."""
    files = {p.name: p.read_bytes() for p in sorted((NVCRE_CRDS / "crds").glob("nvcre.*.yaml"))}
    files.update(
        {p.name: p.read_bytes() for p in sorted((NVCRE_CRDS / "crds-derived").glob("*.yaml"))}
    )
    return files


def chart_files(extra_crds: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Every file of the chart, by path inside the archive."""
    files = {
        f"{CHART_NAME}/{p.relative_to(CHART_DIR).as_posix()}": p.read_bytes()
        for p in sorted(CHART_DIR.rglob("*"))
        if p.is_file()
    }
    crds = {**nvcre_crd_files(), **(extra_crds or {})}
    files.update({f"{CHART_NAME}/crds/{name}": data for name, data in crds.items()})
    return files


def package(dest: Path, extra_crds: dict[str, bytes] | None = None) -> Path:
    """Write `<dest>/cluster-readiness-engine-0.7.0.tgz` and return its path."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in sorted(chart_files(extra_crds).items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            archive.addfile(info, io.BytesIO(data))
    path = dest / f"{CHART_NAME}-0.7.0.tgz"
    with path.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(buffer.getvalue())
    return path


def platform_text(
    *,
    nvcre: str = "",
    engine: str = "argocd",
    version: str = "1.30",
    dependencies: str = "",
    images: str = IMAGES,
    tail: str = "",
    repo_url: str = "",
) -> str:
    """A valid site's text with an `nvcre:` block, a Kubernetes version and a GitOps engine.

    `nvcre` is the block's body, unindented; `tail` is more `spec` keys, unindented.
    """
    text = site_yaml(dependencies=dependencies, images=images)
    block = "".join(f"    {line}\n" for line in nvcre.strip("\n").splitlines())
    text = edit(
        text,
        '    version: "1.30"\n',
        f'    version: "{version}"\n' + (f"  nvcre:\n{block}" if nvcre else ""),
    )
    text += "".join(f"  {line}\n" for line in tail.strip("\n").splitlines())
    text += f"  gitops:\n    engine: {engine}\n"
    return text + (f"    repoURL: {repo_url}\n" if repo_url else "")


def platform_site(**knobs: str) -> Site:
    """The parsed site of `platform_text(**knobs)`."""
    parsed, diags = parse_model(load(platform_text(**knobs)), Site)
    assert parsed is not None, diags
    return parsed
