"""Find the upstream schema of a Kubernetes object and validate the object against it.

Custom resources are checked against the CRDs vendored under `schemas/upstream/` (read
from the compiled index `schemas/upstream/_compiled/<group>_<kind>_<version>.json`, never
from YAML); core kinds against the strict schemas of the installed kubernetes-validate
package for the requested Kubernetes minor version. Validators are built on first use
and kept per kind, so a run pays only for the kinds it generates.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema.protocols import Validator

from nvcregen.core import kube
from nvcregen.core.datafiles import data_dir
from nvcregen.kubeschema import builtin as core
from nvcregen.kubeschema.kubejsonschema import make_validator, problems_from
from nvcregen.kubeschema.normalize import to_json
from nvcregen.kubeschema.objectmeta import NameRule, check_metadata, dns1123_subdomain
from nvcregen.kubeschema.openapi import CelRule, collect_cel_rules, to_json_schema
from nvcregen.kubeschema.problems import UNKNOWN_KIND, Problem, did_you_mean, show

__all__ = ["CelRule", "CrdSchema", "Problem", "SchemaRegistry", "default_registry"]

DEFAULT_KUBE_VERSION = "1.30"
Gvk = tuple[str, str, str]


@dataclass(frozen=True)
class CrdSchema:
    """One served version of a vendored CRD, as compiled by `tools/vendor_upstream.py`.

    Attributes:
        group: API group, e.g. "nvcre.nvidia.com".
        version: API version, e.g. "v1alpha1".
        kind: Kind, e.g. "Certification".
        scope: "Namespaced" or "Cluster".
        source: Path of the CRD file, relative to `schemas/upstream/`.
        schema: The CRD's `openAPIV3Schema`, unchanged.

    """

    group: str
    version: str
    kind: str
    scope: str
    source: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class _Compiled:
    validator: Validator
    namespaced: bool
    name_rule: NameRule
    core: bool


def _default_root() -> Path:
    """The vendored `schemas/upstream/`, found where `core/datafiles.py` finds all data."""
    root = data_dir("schemas") / "upstream"
    if not (root / "_compiled").is_dir():
        raise FileNotFoundError(f"no vendored schemas in {root}")
    return root


def split_api_version(api_version: str) -> tuple[str, str] | None:
    """Return (group, version) for "group/version" or "v1"; None when malformed."""
    group, slash, version = api_version.rpartition("/")
    if not version or (slash and not group) or "/" in group:
        return None
    return group, version


class SchemaRegistry:
    """Validates Kubernetes objects against the schemas of their kinds.

    Args:
        root: The folder holding `_compiled/`; defaults to the vendored `schemas/upstream/`
            (or its copy inside an installed wheel).

    Attributes:
        compile_count: How many validators were built so far (one per kind and, for core
            kinds, per Kubernetes version); lets tests prove the cache works.

    """

    def __init__(self, root: Path | None = None) -> None:
        self._root = root
        self._validators: dict[tuple[str, ...], _Compiled | None] = {}
        self._crds: dict[Gvk, CrdSchema] = {}
        self._cel: dict[Gvk, list[CelRule]] = {}
        self.compile_count = 0

    @functools.cached_property
    def _index(self) -> dict[Gvk, Path]:
        root = self._root or _default_root()
        index: dict[Gvk, Path] = {}
        for path in sorted((root / "_compiled").glob("*.json")):
            parts = path.stem.split("_")
            if len(parts) == 3:
                group, kind, version = parts
                index[group, version, kind] = path
        return index

    def known_crds(self) -> list[tuple[str, str, str]]:
        """Return (group, version, kind) of every vendored CRD version, sorted."""
        return sorted(self._index)

    def crd(self, api_version: str, kind: str) -> CrdSchema | None:
        """Return the vendored CRD schema for a custom resource kind, or None."""
        split = split_api_version(api_version)
        if split is None or (split[0], split[1], kind) not in self._index:
            return None
        gvk = (split[0], split[1], kind)
        if gvk not in self._crds:
            data = json.loads(self._index[gvk].read_bytes())
            fields = ("group", "version", "kind", "scope", "source", "schema")
            self._crds[gvk] = CrdSchema(**{key: data[key] for key in fields})
        return self._crds[gvk]

    def cel_rules(self, api_version: str, kind: str) -> list[CelRule]:
        """Return the CEL rules (`x-kubernetes-validations`) of a custom resource kind.

        Args:
            api_version: e.g. "nvcre.nvidia.com/v1alpha1".
            kind: e.g. "Certification".

        Returns:
            The rules, parents before children; [] for core kinds and unknown kinds.

        """
        crd = self.crd(api_version, kind)
        if crd is None:
            return []
        gvk = (crd.group, crd.version, crd.kind)
        if gvk not in self._cel:
            self._cel[gvk] = collect_cel_rules(crd.schema)
        return list(self._cel[gvk])

    def validate(
        self, obj: Mapping[str, object], *, kube_version: str = DEFAULT_KUBE_VERSION
    ) -> list[Problem]:
        """Validate one object the way an API server with strict field validation would.

        CEL rules are not evaluated here (see `cel_rules`).

        Args:
            obj: The object, as plain data (mappings, lists, scalars).
            kube_version: Kubernetes minor version for core kinds, e.g. "1.30".

        Returns:
            Problems sorted by pointer; [] when the object is valid.

        """
        data, problems = to_json(obj)
        if not isinstance(data, dict):
            return problems or [Problem("", "an object must be a mapping", UNKNOWN_KIND)]
        return sorted({*problems, *self.validate_json(data, kube_version=kube_version)}, key=_order)

    def validate_json(
        self, data: dict[str, Any], *, kube_version: str = DEFAULT_KUBE_VERSION
    ) -> list[Problem]:
        """`validate` for an object that is plain JSON already, as `to_json` returns it.

        Spares a hot caller that has called `to_json` itself a second walk over the object.

        Args:
            data: The object, as plain JSON data.
            kube_version: Kubernetes minor version for core kinds, e.g. "1.30".

        Returns:
            Problems sorted by pointer; [] when the object is valid.

        """
        compiled, lookup = self._lookup(data, kube_version)
        if compiled is None:
            return sorted(set(lookup), key=_order)
        problems = problems_from(compiled.validator.iter_errors(data))
        if compiled.core:  # ObjectMeta is checked below, with better messages
            problems = [p for p in problems if p.pointer != "/metadata" and not _in_metadata(p)]
        issues = check_metadata(
            data.get("metadata"),
            kind=str(data["kind"]),
            namespaced=compiled.namespaced,
            rule=compiled.name_rule,
        )
        problems += [issue.at() for issue in issues]
        return sorted(set(problems), key=_order)

    def _lookup(
        self, data: Mapping[str, Any], kube_version: str
    ) -> tuple[_Compiled | None, list[Problem]]:
        api_version, kind = data.get("apiVersion"), data.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
            return None, [Problem("", "missing apiVersion or kind", UNKNOWN_KIND)]
        split = split_api_version(api_version)
        if split is None:
            message = f"apiVersion {show(api_version)} is not of the form group/version or v1"
            return None, [Problem("/apiVersion", message, UNKNOWN_KIND)]
        group, version = split
        if (group, version, kind) in self._index:
            return self._crd_validator((group, version, kind)), []
        if not kube.is_core_group(group):
            return None, [self._unknown_crd(group, version, kind)]
        return self._lookup_core(kube_version, group, version, kind)

    def _lookup_core(
        self, kube_version: str, group: str, version: str, kind: str
    ) -> tuple[_Compiled | None, list[Problem]]:
        minor = core.minor_version(kube_version)
        supported = core.supported_versions()
        if minor not in supported:
            return None, [_unsupported_kube(kube_version, supported)]
        compiled = self._core_validator(minor, group, version, kind)
        if compiled is not None:
            return compiled, []
        api_version = f"{group}/{version}" if group else version
        message = f"Kubernetes {minor} has no kind {kind} in {api_version}"
        real = core.spelling(minor, group, version, kind)
        message += f'; did you mean "{real}"?' if real else ""
        return None, [Problem("/kind", message, UNKNOWN_KIND)]

    def _crd_validator(self, gvk: Gvk) -> _Compiled:
        key = ("crd", *gvk)
        if key not in self._validators:
            crd = self.crd(f"{gvk[0]}/{gvk[1]}", gvk[2])
            assert crd is not None  # gvk comes from the index
            validator = make_validator(to_json_schema(crd.schema))
            namespaced = crd.scope == "Namespaced"
            self._validators[key] = _Compiled(validator, namespaced, dns1123_subdomain, core=False)
            self.compile_count += 1
        compiled = self._validators[key]
        assert compiled is not None
        return compiled

    def _core_validator(self, minor: str, group: str, version: str, kind: str) -> _Compiled | None:
        key = ("core", minor, group, version, kind)
        if key not in self._validators:
            schema = core.load_kind(minor, group, version, kind)
            compiled = None
            if schema is not None:
                validator = make_validator(_without_metadata(schema), core.definitions(minor))
                namespaced = kube.is_namespaced(group, kind)
                compiled = _Compiled(validator, namespaced, core.name_rule(group, kind), core=True)
                self.compile_count += 1
            self._validators[key] = compiled
        return self._validators[key]

    def _unknown_crd(self, group: str, version: str, kind: str) -> Problem:
        served = sorted(v for g, v, k in self._index if g == group and k == kind)
        if served:
            message = f"{group} serves {kind} in {', '.join(served)}, not in {version}"
            return Problem("/apiVersion", message, UNKNOWN_KIND)
        kinds = sorted({k for g, _, k in self._index if g == group})
        if kinds:
            hint = did_you_mean(kind, kinds)
            message = f"no vendored schema for kind {kind} in {group}{hint}"
            message += f" (known: {', '.join(kinds)})"
            return Problem("/kind", message, UNKNOWN_KIND)
        message = f"no vendored schema for API group {group} (apiVersion {group}/{version})"
        return Problem("/apiVersion", message, UNKNOWN_KIND)


def _without_metadata(schema: dict[str, Any]) -> dict[str, Any]:
    """A core kind's schema that accepts any `metadata`.

    `validate` drops every schema problem in a core kind's metadata (`check_metadata`
    says the same, better), so validating metadata against ObjectMeta is wasted work.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict) or "metadata" not in properties:
        return schema
    return {**schema, "properties": {**properties, "metadata": {}}}


def _unsupported_kube(kube_version: str, supported: tuple[str, ...]) -> Problem:
    span = (
        f"{supported[0]} to {supported[-1]}" if supported else "none (kubernetes-validate missing)"
    )
    message = f"no core schemas for Kubernetes {show(kube_version)}; supported: {span}"
    return Problem("", message, UNKNOWN_KIND)


def _in_metadata(problem: Problem) -> bool:
    return problem.pointer.startswith("/metadata/")


def _order(problem: Problem) -> tuple[str, str, str]:
    return (problem.pointer, problem.code, problem.message)


@functools.cache
def default_registry() -> SchemaRegistry:
    """Return the process-wide registry over the vendored schemas (built once)."""
    return SchemaRegistry()
