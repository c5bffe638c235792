"""Schemas of core Kubernetes kinds, read offline from the kubernetes-validate package.

kubernetes-validate ships, for each minor version, a folder `v1.NN.0-local-strict/` with
one JSON Schema (Draft 2020-12) per kind, named `<kind>-<group prefix>-<version>.json`
(`configmap-v1.json`, `deployment-apps-v1.json`, `clusterrole-rbac-v1.json`), whose
`$ref`s point into `_definitions.json`. Only those files are read; the package's own code
(which can fetch schemas over the network) is never imported.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

from referencing import Registry, Resource

from nvcregen.kubeschema.objectmeta import (
    NameRule,
    dns1035_label,
    dns1123_label,
    dns1123_subdomain,
    path_segment,
)

_PACKAGE = "kubernetes_validate"
_FOLDER_RE = re.compile(r"v(\d+)\.(\d+)\.0-local-strict")
_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)(\.\d+)?")
_RBAC = "rbac.authorization.k8s.io"

_NAME_RULES: dict[tuple[str, str], NameRule] = {
    ("", "Namespace"): dns1123_label,
    ("", "Service"): dns1035_label,
    (_RBAC, "Role"): path_segment,
    (_RBAC, "ClusterRole"): path_segment,
    (_RBAC, "RoleBinding"): path_segment,
    (_RBAC, "ClusterRoleBinding"): path_segment,
}


def name_rule(group: str, kind: str) -> NameRule:
    """Return the rule `metadata.name` of a core kind must follow."""
    return _NAME_RULES.get((group, kind), dns1123_subdomain)


@functools.cache
def schema_root() -> Path | None:
    """Return the `kubernetes-json-schema` folder of the installed package, if any."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    return root if root.is_dir() else None


@functools.cache
def supported_versions() -> tuple[str, ...]:
    """Return the Kubernetes minor versions with strict schemas, oldest first ("1.25", ...)."""
    root = schema_root()
    found = [_FOLDER_RE.fullmatch(p.name) for p in root.iterdir()] if root else []
    pairs = sorted((int(m[1]), int(m[2])) for m in found if m)
    return tuple(f"{major}.{minor}" for major, minor in pairs)


def minor_version(kube_version: str) -> str | None:
    """Return "1.30" for "1.30", "v1.30" or "1.30.4"; None when it is not a version."""
    match = _VERSION_RE.fullmatch(kube_version.strip())
    return f"{int(match[1])}.{int(match[2])}" if match else None


def _folder(minor: str) -> Path:
    root = schema_root()
    assert root is not None  # callers check supported_versions() first
    return root / f"v{minor}.0-local-strict"


def _kind_file(minor: str, group: str, version: str, kind: str) -> Path:
    prefix = f"-{group.split('.', maxsplit=1)[0]}" if group else ""
    return _folder(minor) / f"{kind.lower()}{prefix}-{version}.json"


def _top_level_kind(schema: dict[str, Any], group: str, version: str) -> str | None:
    for gvk in schema.get("x-kubernetes-group-version-kind") or []:
        if gvk.get("group") == group and gvk.get("version") == version:
            return str(gvk.get("kind"))
    return None


def load_kind(minor: str, group: str, version: str, kind: str) -> dict[str, Any] | None:
    """Return the JSON Schema of a top-level core kind, or None when there is none."""
    path = _kind_file(minor, group, version, kind)
    if not path.is_file():
        return None
    schema: dict[str, Any] = json.loads(path.read_bytes())
    return schema if _top_level_kind(schema, group, version) == kind else None


def spelling(minor: str, group: str, version: str, kind: str) -> str | None:
    """Return the correctly cased kind when `kind` differs from a real one only in case."""
    path = _kind_file(minor, group, version, kind)
    if not path.is_file():
        return None
    real = _top_level_kind(json.loads(path.read_bytes()), group, version)
    return real if real and real != kind else None


@functools.cache
def definitions(minor: str) -> Registry[Any]:
    """Return a registry holding `_definitions.json` of one minor version, to resolve $refs."""
    contents = json.loads((_folder(minor) / "_definitions.json").read_bytes())
    resource: Resource[Any] = Resource.from_contents(contents)
    registry: Registry[Any] = Registry().with_resource(str(contents["$id"]), resource)
    return registry
