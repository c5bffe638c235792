"""Kubernetes ObjectMeta rules that CRD schemas leave to the API server.

CRD schemas describe `metadata` only as `type: object`; the API server then applies the
apimachinery rules below to every object. They follow `k8s.io/apimachinery`'s
`ValidateObjectMeta` and `k8s.io/apimachinery/pkg/util/validation`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from datetime import datetime

from nvcregen.core.kube import LABEL_MAX, SUBDOMAIN_MAX
from nvcregen.core.secrets import shown
from nvcregen.kubeschema.problems import (
    METADATA_RULE,
    SCHEMA_VIOLATION,
    Issue,
    JsonPath,
    show,
    unknown_field,
)

NameRule = Callable[[str], list[str]]

_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_RFC3339_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
_ANNOTATIONS_TOTAL = 256 * 1024
_OWNER_REFERENCE_FIELDS = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")


def dns1123_subdomain(value: str) -> list[str]:
    """Check a DNS-1123 subdomain (most object names); return what is wrong."""
    errors = (
        [] if len(value) <= SUBDOMAIN_MAX else [f"must be no more than {SUBDOMAIN_MAX} characters"]
    )
    if not _SUBDOMAIN_RE.fullmatch(value):
        errors.append(
            "must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return errors


def dns1123_label(value: str) -> list[str]:
    """Check a DNS-1123 label (namespace names, Namespace objects); return what is wrong."""
    errors = [] if len(value) <= LABEL_MAX else [f"must be no more than {LABEL_MAX} characters"]
    if not _LABEL_RE.fullmatch(value):
        errors.append(
            "must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character"
        )
    return errors


def dns1035_label(value: str) -> list[str]:
    """Check a DNS-1035 label (Service names); return what is wrong."""
    errors = [] if len(value) <= LABEL_MAX else [f"must be no more than {LABEL_MAX} characters"]
    if not _DNS1035_RE.fullmatch(value):
        errors.append(
            "must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character"
        )
    return errors


def path_segment(value: str) -> list[str]:
    """Check a path segment name (RBAC object names); return what is wrong."""
    if value in {".", ".."}:
        return [f"may not be {show(value)}"]
    return [f"may not contain {show(c)}" for c in "/%" if c in value]


def qualified_name(value: str) -> list[str]:
    """Check a label or annotation key: an optional DNS subdomain prefix, '/', a name."""
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return ["prefix part must be non-empty"]
    if prefix.count("/"):
        return ["a qualified name must have at most one '/'"]
    errors = [f"prefix part {e}" for e in (dns1123_subdomain(prefix) if slash else [])]
    if not name:
        return [*errors, "name part must be non-empty"]
    if len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED_RE.fullmatch(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return errors


def label_value(value: str) -> list[str]:
    """Check a label value: empty, or at most 63 characters of the label alphabet."""
    errors = (
        []
        if len(value) <= LABEL_MAX
        else [f"must be no more than {LABEL_MAX} characters (got {len(value)})"]
    )
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(
            "must be empty or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return errors


def is_rfc3339(value: str) -> bool:
    """Return whether `value` is an RFC 3339 date-time, as Kubernetes timestamps are."""
    if not _RFC3339_RE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.upper().replace(" ", "T"))
    except ValueError:
        return False
    return True


def _rule_issues(
    path: JsonPath, value: str, rule: NameRule, what: str, checked: str | None = None
) -> list[Issue]:
    """Apply `rule` to `checked` (default: `value`); messages quote `value` as `shown` does.

    A name or label the rule refuses came from somewhere (a site's label map, an input
    the site names): anything secret or encoded-looking in it is masked, its length said.
    """
    errors = _errors(rule, value if checked is None else checked)
    return [Issue(path, f"{what} {shown(value)} {e}", METADATA_RULE) for e in errors]


@functools.lru_cache(maxsize=65_536)
def _errors(rule: NameRule, value: str) -> tuple[str, ...]:
    """A rule's verdict on a value, once per process: the same labels recur in every object."""
    return tuple(rule(value))


def _type_issue(path: JsonPath, value: object, expected: str) -> Issue:
    return Issue(path, f"{show(value)} is not of type {expected}", SCHEMA_VIOLATION)


def _string_map(path: JsonPath, value: object) -> list[Issue] | Mapping[str, object]:
    if not isinstance(value, Mapping):
        return [_type_issue(path, value, "object")]
    return value


def _labels(path: JsonPath, value: object) -> list[Issue]:
    labels = _string_map(path, value)
    if isinstance(labels, list):
        return labels
    issues: list[Issue] = []
    for key, item in labels.items():
        issues += _rule_issues((*path, key), key, qualified_name, "label key")
        if isinstance(item, str):
            issues += _rule_issues((*path, key), item, label_value, "label value")
        else:
            issues.append(_type_issue((*path, key), item, "string (quote it in YAML)"))
    return issues


def _annotations(path: JsonPath, value: object) -> list[Issue]:
    annotations = _string_map(path, value)
    if isinstance(annotations, list):
        return annotations
    issues: list[Issue] = []
    for key, item in annotations.items():
        issues += _rule_issues((*path, key), key.lower(), qualified_name, "annotation key")
        if not isinstance(item, str):
            issues.append(_type_issue((*path, key), item, "string (quote it in YAML)"))
    size = sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str))
    if size > _ANNOTATIONS_TOTAL:
        message = f"annotations total {size} bytes, more than the limit of {_ANNOTATIONS_TOTAL}"
        issues.append(Issue(path, message, METADATA_RULE))
    return issues


def _finalizers(path: JsonPath, value: object) -> list[Issue]:
    if not isinstance(value, list):
        return [_type_issue(path, value, "array")]
    issues: list[Issue] = []
    for index, item in enumerate(value):
        if not isinstance(item, str):
            issues.append(_type_issue((*path, index), item, "string"))
        else:
            issues += _rule_issues((*path, index), item, qualified_name, "finalizer")
    return issues


def _owner_references(path: JsonPath, value: object) -> list[Issue]:
    if not isinstance(value, list):
        return [_type_issue(path, value, "array")]
    issues: list[Issue] = []
    for index, ref in enumerate(value):
        here = (*path, index)
        if not isinstance(ref, Mapping):
            issues.append(_type_issue(here, ref, "object"))
            continue
        unknown = sorted(set(ref) - set(_OWNER_REFERENCE_FIELDS))
        issues.extend(unknown_field(here, key, _OWNER_REFERENCE_FIELDS) for key in unknown)
        issues.extend(
            Issue(here, f'missing required field "{key}"', SCHEMA_VIOLATION)
            for key in _OWNER_REFERENCE_FIELDS[:4]
            if not isinstance(ref.get(key), str)
        )
    return issues


def _string(path: JsonPath, value: object) -> list[Issue]:
    return [] if isinstance(value, str) else [_type_issue(path, value, "string")]


def _integer(path: JsonPath, value: object) -> list[Issue]:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return [] if ok else [_type_issue(path, value, "integer")]


def _timestamp(path: JsonPath, value: object) -> list[Issue]:
    if value is None or (isinstance(value, str) and is_rfc3339(value)):
        return []
    return [Issue(path, f"{show(value)} is not an RFC 3339 date-time", SCHEMA_VIOLATION)]


def _array(path: JsonPath, value: object) -> list[Issue]:
    return [] if isinstance(value, list) else [_type_issue(path, value, "array")]


_FIELDS: dict[str, Callable[[JsonPath, object], list[Issue]]] = {
    "name": _string,
    "generateName": _string,
    "namespace": _string,
    "labels": _labels,
    "annotations": _annotations,
    "finalizers": _finalizers,
    "ownerReferences": _owner_references,
    "uid": _string,
    "resourceVersion": _string,
    "generation": _integer,
    "creationTimestamp": _timestamp,
    "deletionTimestamp": _timestamp,
    "deletionGracePeriodSeconds": _integer,
    "managedFields": _array,
    "selfLink": _string,
}


def _fields(meta: Mapping[str, object], path: JsonPath) -> list[Issue]:
    issues: list[Issue] = []
    for key, value in meta.items():
        check = _FIELDS.get(key)
        if check is None:
            issues.append(unknown_field(path, key, _FIELDS))
        else:
            issues += check((*path, key), value)
    return issues


def _identity(
    meta: Mapping[str, object], path: JsonPath, rule: NameRule, *, name_required: bool
) -> list[Issue]:
    name, generate = meta.get("name"), meta.get("generateName")
    issues: list[Issue] = []
    if isinstance(name, str) and name:
        issues += _rule_issues((*path, "name"), name, rule, "name")
    elif isinstance(generate, str) and generate:
        # As apimachinery does: a trailing '-' is fine, the server appends random letters.
        prefix = generate[:-1] + "a" if len(generate) > 1 and generate.endswith("-") else generate
        issues += _rule_issues((*path, "generateName"), generate, rule, "generateName", prefix)
    elif name_required and name in (None, "") and generate in (None, ""):
        message = 'missing required field "name" (or "generateName")'
        issues.append(Issue(path, message, METADATA_RULE))
    namespace = meta.get("namespace")
    if isinstance(namespace, str):
        issues += _rule_issues((*path, "namespace"), namespace, dns1123_label, "namespace")
    return issues


def check_metadata(
    meta: object,
    *,
    kind: str,
    namespaced: bool | None,
    rule: NameRule = dns1123_subdomain,
    embedded: bool = False,
) -> list[Issue]:
    """Check an object's `metadata`; paths in the result start with "metadata".

    Args:
        meta: The value of the object's `metadata` field (None when absent).
        kind: The object's kind, for messages.
        namespaced: Whether the kind is namespaced; None when unknown (no scope check).
        rule: The name rule of the kind (DNS-1123 subdomain for most kinds).
        embedded: True for an object embedded in another (`x-kubernetes-embedded-resource`):
            then neither metadata nor a name is required.

    Returns:
        The issues found, in field order.

    """
    path: JsonPath = ("metadata",)
    if meta is None:
        missing = Issue((), 'missing required field "metadata"', METADATA_RULE)
        return [] if embedded else [missing]
    if not isinstance(meta, Mapping):
        return [_type_issue(path, meta, "object")]
    issues = _fields(meta, path)
    issues += _identity(meta, path, rule, name_required=not embedded)
    if namespaced is False and "namespace" in meta:
        message = f"must not be set: {kind} is cluster-scoped"
        issues.append(Issue((*path, "namespace"), message, METADATA_RULE))
    return issues
