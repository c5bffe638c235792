"""Kubernetes facts every layer asks: whether a kind is namespaced, and how long names may be.

Scopes of custom resources come from `schemas/upstream/_compiled/scopes.json`, which
`tools/vendor_upstream.py` writes from the vendored CRDs; scopes of the built-in kinds are
the short list below (everything else in a Kubernetes group is namespaced).
"""

from __future__ import annotations

import json
import re
from functools import cache

from nvcregen.core.datafiles import data_dir

KUBE_VERSION_PATTERN = r"^1\.(2[5-9]|3[0-7])$"
"""The Kubernetes minor versions a site may state (each has vendored core schemas)."""

_RBAC = "rbac.authorization.k8s.io"

CLUSTER_SCOPED: dict[str, frozenset[str]] = {
    "": frozenset({"Namespace", "Node", "PersistentVolume", "ComponentStatus"}),
    _RBAC: frozenset({"ClusterRole", "ClusterRoleBinding"}),
    "storage.k8s.io": frozenset(
        {"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass"}
    ),
    "apiextensions.k8s.io": frozenset({"CustomResourceDefinition"}),
    "apiregistration.k8s.io": frozenset({"APIService"}),
    "admissionregistration.k8s.io": frozenset(
        {
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
        }
    ),
    "scheduling.k8s.io": frozenset({"PriorityClass"}),
    "node.k8s.io": frozenset({"RuntimeClass"}),
    "networking.k8s.io": frozenset({"IngressClass", "IPAddress", "ServiceCIDR"}),
    "certificates.k8s.io": frozenset({"CertificateSigningRequest", "ClusterTrustBundle"}),
    "flowcontrol.apiserver.k8s.io": frozenset({"FlowSchema", "PriorityLevelConfiguration"}),
    "resource.k8s.io": frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule"}),
    "internal.apiserver.k8s.io": frozenset({"StorageVersion"}),
    "storagemigration.k8s.io": frozenset({"StorageVersionMigration"}),
    "authentication.k8s.io": frozenset({"TokenReview", "SelfSubjectReview"}),
    "authorization.k8s.io": frozenset(
        {"SubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview"}
    ),
}

# Names. A label value (and a DNS-1123 or RFC 1035 label) holds at most 63 characters;
# a DNS-1123 subdomain (most object names) at most 253.
LABEL_MAX = 63
SUBDOMAIN_MAX = 253
# What JobSet and the Job controller append to a TrainJob's name for a pod's hostname
# (`<name>-launcher-0-0-abcde`): the TrainJob name must leave room for it within LABEL_MAX.
POD_SUFFIX = len("-launcher-0-0-abcde")


def api_group(api_version: str) -> str:
    """The API group of an apiVersion (`""` for the core group `v1`)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def is_core_group(group: str) -> bool:
    """Whether an API group belongs to Kubernetes itself (`""`, `apps`, `*.k8s.io`)."""
    return "." not in group or group.endswith(".k8s.io")


@cache
def _crd_scopes() -> dict[str, str]:
    path = data_dir("schemas") / "upstream" / "_compiled" / "scopes.json"
    scopes: dict[str, str] = json.loads(path.read_bytes())
    return scopes


def is_namespaced(group: str, kind: str, *, crd_scopes: dict[str, str] | None = None) -> bool:
    """Whether objects of `group`/`kind` live in a namespace.

    `crd_scopes` (`"group/kind" -> "Namespaced" | "Cluster"`) adds CRDs a chart brings
    along; then the vendored CRDs count, then the built-in kinds. A kind of a foreign
    group that nothing describes counts as cluster-scoped, the cautious answer for
    permission lists.
    """
    key = f"{group}/{kind}"
    for scopes in (crd_scopes or {}, _crd_scopes()):
        if key in scopes:
            return scopes[key] == "Namespaced"
    if is_core_group(group):
        return kind not in CLUSTER_SCOPED.get(group, frozenset())
    return False


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}")


# A label's value (empty, or at most 63 letters, digits, `-`, `_` and `.` beginning and
# ending with a letter or digit) and key (an optional DNS subdomain prefix and `/`, then a
# name of the value's alphabet, not empty), as apimachinery's validation has them.
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_VALUE = re.compile(f"(?:{_LABEL_NAME})?")
_LABEL_KEY_NAME = re.compile(_LABEL_NAME)


def is_label_value(value: str) -> bool:
    """Whether `value` is a valid Kubernetes label value."""
    return _LABEL_VALUE.fullmatch(value) is not None


def is_label_key(key: str) -> bool:
    """Whether `key` is a valid Kubernetes label key (`[prefix/]name`)."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (len(prefix) <= SUBDOMAIN_MAX and _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return _LABEL_KEY_NAME.fullmatch(name) is not None


def node_name_problem(name: object) -> str | None:
    """What keeps `name` from being a Kubernetes node name (None when it is one).

    A Node is named by a DNS-1123 subdomain of at most 253 characters (RFC 1123): lower
    case letters, digits, `-` and `.`, so no `/`, no `..` path step and no percent sign
    can reach an API path. Only the first 80 characters of a bad name are shown.
    """
    if not isinstance(name, str):
        return f"{type(name).__name__} {str(name)[:80]!r} is not a node name"
    if len(name) > SUBDOMAIN_MAX:
        return f"{name[:80]!r}... is not a node name: longer than {SUBDOMAIN_MAX} characters"
    if not _DNS_SUBDOMAIN.fullmatch(name):
        shown = repr(name[:80]) + ("..." if len(name) > 80 else "")
        return f"{shown} is not a node name (an RFC 1123 subdomain)"
    return None


def name_problem(kind: str, namespace: str, name: str) -> str | None:
    """What makes an object's identity unsafe as a path (None when it is a valid one).

    Every object nvcregen reads back (Certifications, WorkloadRuns, their measurements,
    ConfigMaps, TrainJobs, Jobs, pods) is named by a DNS-1123 subdomain and lives in a
    namespace named by a DNS-1123 label; its kind is a CamelCase identifier. None of
    those can be `..`, hold a `/`, or be empty, so a valid identity is a safe file name.
    """
    if not _KIND.fullmatch(kind):
        return f"kind {kind!r} is not a Kubernetes kind"
    if namespace and not (len(namespace) <= LABEL_MAX and _DNS_LABEL.fullmatch(namespace)):
        return f"namespace {namespace!r} is not a Kubernetes namespace name (a DNS-1123 label)"
    if not (len(name) <= SUBDOMAIN_MAX and _DNS_SUBDOMAIN.fullmatch(name)):
        return f"name {name!r} is not a Kubernetes object name (a DNS-1123 subdomain)"
    return None
