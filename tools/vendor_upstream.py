"""Refresh the vendored upstream CRDs and their compiled JSON index.

Usage (from the repository root)::

    python -m tools.vendor_upstream --from /path/to/upstream [--check]

It copies the files listed in ``COPIES`` byte for byte from ``--from`` into
``schemas/upstream/`` (and the NVCRE examples into ``tests/fixtures/nvcre-examples/``),
then rewrites ``schemas/upstream/_compiled/``: one JSON file per served CRD version,
``<group>_<kind>_<version>.json``, holding the ``openAPIV3Schema`` so that nvcregen never
parses CRD YAML at run time. Output is canonical JSON (sorted keys, no spaces), so a
rerun on the same input is byte-identical. ``--check`` writes nothing and exits 1 when
anything would change. Afterwards, make sure every file is listed with its sha256 in
``schemas/upstream/SOURCES.md``; the command prints the rows that are missing or stale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEST = REPO / "schemas" / "upstream"
FIXTURES = REPO / "tests" / "fixtures" / "nvcre-examples"
COMPILED = "_compiled"
SCOPES = "scopes.json"  # group/kind -> Namespaced | Cluster, for every vendored CRD

# (folder under --from, folder under schemas/upstream/, globs relative to both)
COPIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # NVCRE publishes no tagged CRD set for 0.7.0: the files come from the commits listed
    # in SOURCES.md and are filed under the release they are meant to describe.
    ("nvcre", "nvcre/v0.7.0", ("crds/*.yaml", "crds-derived/*.yaml")),
    (
        "kubeflow-trainer/v2.2.1",
        "kubeflow-trainer/v2.2.1",
        ("crds/*.yaml", "chart/Chart.yaml", "runtimes/**/*.yaml", "install/*.yaml"),
    ),
    ("jobset/v0.11.0", "jobset/v0.11.0", ("crds/*.yaml",)),
    ("prometheus-operator/v0.89.0", "prometheus-operator/v0.89.0", ("crds/*.yaml",)),
    ("argo-cd/v3.5.1", "argo-cd/v3.5.1", ("crds/*.yaml",)),
    ("flux-source-controller/v1.9.1", "flux-source-controller/v1.9.1", ("crds/*.yaml",)),
    ("flux-kustomize-controller/v1.9.4", "flux-kustomize-controller/v1.9.4", ("crds/*.yaml",)),
    ("flux-helm-controller/v1.6.3", "flux-helm-controller/v1.6.3", ("crds/*.yaml",)),
    # source-watcher's ArtifactGenerator: a per-site source whose revision is a content digest
    ("flux-source-watcher/v2.2.1", "flux-source-watcher/v2.2.1", ("crds/*.yaml",)),
    # Kueue: only the kinds nvcregen emits (the Workload CRD is 1.4 MB), the
    # default controller Configuration and the chart's Chart.yaml and values.yaml.
    (
        "kueue",
        "kueue/v0.19.2",
        (
            "crds/kueue.x-k8s.io_clusterqueues.yaml",
            "crds/kueue.x-k8s.io_localqueues.yaml",
            "crds/kueue.x-k8s.io_resourceflavors.yaml",
            "crds/kueue.x-k8s.io_topologies.yaml",
            "crds/kueue.x-k8s.io_workloadpriorityclasses.yaml",
            "crds/kueue.x-k8s.io_workloads.yaml",  # prebuilt Workloads (trainer mode)
            "config/controller_manager_config.yaml",
            "chart/Chart.yaml",
            "chart/values.yaml",
        ),
    ),
)
EXAMPLES = "nvcre/examples/*.yaml"

# CRD groups that are vendored for the record but must never be served as schemas.
SKIP_GROUPS = {
    "cre.nvidia.com": "pre-rename NVCRE group; crds-derived/ holds the nvcre.nvidia.com copy",
}
# When two files define the same group/kind/version, the one in the later folder wins.
CRD_FOLDERS = ("crds", "crds-derived")

Loader = Callable[[Path], list[Any]]


@dataclass(frozen=True)
class Copy:
    source: Path
    target: Path


def copy_plan(src: Path, dest: Path = DEST, fixtures: Path = FIXTURES) -> list[Copy]:
    """Every file to copy, in a stable order."""
    plan: list[Copy] = []
    for src_dir, dest_dir, globs in COPIES:
        base = src / src_dir
        for pattern in globs:
            found = sorted(p for p in base.glob(pattern) if p.is_file())
            if not found:
                raise SystemExit(f"nothing matches {base / pattern}")
            plan.extend(Copy(p, dest / dest_dir / p.relative_to(base)) for p in found)
    plan.extend(Copy(p, fixtures / p.name) for p in sorted(src.glob(EXAMPLES)))
    return plan


def ruamel_loader(path: Path) -> list[Any]:
    """Parse every document of a YAML file (YAML 1.2, safe, pure Python)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    with path.open(encoding="utf-8") as handle:
        return [doc for doc in yaml.load_all(handle) if doc is not None]


def crd_files(dest: Path = DEST) -> list[Path]:
    """The vendored CRD files, `crds/` before `crds-derived/` within each project."""
    files = [p for folder in CRD_FOLDERS for p in dest.glob(f"**/{folder}/*.yaml")]
    return sorted(files, key=lambda p: (p.parent.parent, CRD_FOLDERS.index(p.parent.name), p))


def _served_versions(doc: dict[str, Any], source: str) -> Iterator[tuple[str, dict[str, Any]]]:
    spec = doc["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    for version in spec["versions"]:
        if not version.get("served", False):
            continue
        entry = {
            "group": group,
            "kind": kind,
            "version": version["name"],
            "scope": spec["scope"],
            "source": source,
            "schema": version["schema"]["openAPIV3Schema"],
        }
        yield f"{group}_{kind}_{version['name']}.json", entry


def render(entry: dict[str, Any]) -> bytes:
    """Canonical JSON: sorted keys, no whitespace, UTF-8, one trailing newline."""
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def compile_index(dest: Path = DEST, load: Loader = ruamel_loader) -> dict[str, bytes]:
    """Map each `_compiled/` file name to its bytes, from the vendored CRD YAML."""
    out: dict[str, bytes] = {}
    origin: dict[str, Path] = {}
    scopes: dict[str, str] = {}
    for path in crd_files(dest):
        source = path.relative_to(dest).as_posix()
        for doc in load(path):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            if doc["spec"]["group"] in SKIP_GROUPS:
                continue
            scopes[f"{doc['spec']['group']}/{doc['spec']['names']['kind']}"] = doc["spec"]["scope"]
            for name, entry in _served_versions(doc, source):
                previous = origin.get(name)
                if previous is not None and previous.parent.name == path.parent.name:
                    raise SystemExit(f"{name} is defined by both {previous} and {path}")
                origin[name] = path
                out[name] = render(entry)
    out[SCOPES] = render(dict(sorted(scopes.items())))  # read by nvcregen/core/kube.py
    return dict(sorted(out.items()))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sources_problems(dest: Path = DEST, fixtures: Path = FIXTURES) -> list[str]:
    """Files that SOURCES.md does not list on one line with their current sha256.

    Vendored files are named relative to `dest`; fixtures as `tests/fixtures/<dir>/<file>`.
    """
    sources = dest / "SOURCES.md"
    lines = sources.read_text(encoding="utf-8").splitlines() if sources.exists() else []
    named = [
        (p, p.relative_to(dest).as_posix())
        for p in sorted(dest.rglob("*"))
        if p.is_file() and p.name != "SOURCES.md" and COMPILED not in p.relative_to(dest).parts
    ]
    named += [(p, f"tests/fixtures/{fixtures.name}/{p.name}") for p in sorted(fixtures.glob("*"))]
    problems: list[str] = []
    for path, rel in named:
        digest = sha256(path)
        if not any(f"`{rel}`" in line and digest in line for line in lines):
            problems.append(f"{rel} sha256 {digest}")
    return problems


def _sync(target: Path, data: bytes, *, check: bool) -> bool:
    """Write `data` to `target` if it differs; return whether it differed."""
    if target.exists() and target.read_bytes() == data:
        return False
    if not check:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return True


def refresh(src: Path, dest: Path, fixtures: Path, *, check: bool) -> list[str]:
    """Copy, compile and prune; return the paths that changed (or would change)."""
    plan = copy_plan(src, dest, fixtures)
    changed = [str(c.target) for c in plan if _sync(c.target, c.source.read_bytes(), check=check)]
    planned = {c.target for c in plan}
    for extra in sorted(p for p in dest.rglob("*.yaml") if p.is_file() and p not in planned):
        print(f"not in COPIES, left alone: {extra}", file=sys.stderr)
    compiled_dir = dest / COMPILED
    # In --check mode this compiles the vendored YAML as it is; drift in the copies
    # themselves has already been reported above.
    wanted = compile_index(dest)
    changed += [
        str(compiled_dir / n) for n, b in wanted.items() if _sync(compiled_dir / n, b, check=check)
    ]
    for stale in sorted(compiled_dir.glob("*.json")):
        if stale.name not in wanted:
            changed.append(f"{stale} (stale)")
            if not check:
                stale.unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.vendor_upstream",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--from",
        dest="src",
        type=Path,
        required=True,
        help="folder laid out like the shared upstream/ collection",
    )
    parser.add_argument("--dest", type=Path, default=DEST)
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on drift")
    args = parser.parse_args(argv)
    changed = refresh(
        args.src.resolve(), args.dest.resolve(), args.fixtures.resolve(), check=args.check
    )
    for line in changed:
        print(("would change: " if args.check else "wrote: ") + line)
    missing = sources_problems(args.dest.resolve(), args.fixtures.resolve())
    for line in missing:
        print(f"SOURCES.md lacks a row for {line}", file=sys.stderr)
    if args.check and (changed or missing):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
