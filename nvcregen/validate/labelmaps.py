"""NVC115: a site's label maps hold Kubernetes labels, refused where they are written.

`dependencies.prometheus.selector` and `monitoring.serviceMonitor.labels` become the
labels of the ServiceMonitor and PrometheusRule, and `nodePools[].selector` a node
selector. A key or value Kubernetes refuses was found only in the generated object
(NVC604, issue #32): at the line of the object's source (`recordingRules` for the
PrometheusRule), as "a bug in nvcregen", with the value printed whole. Here it is
refused at its own key or value, quoted as messages quote inputs (`core/secrets.py::shown`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.kube import is_label_key, is_label_value
from nvcregen.core.secrets import shown
from nvcregen.spec.positions import Document, pointer
from nvcregen.spec.v1alpha1 import Site

CODE = codes.NVC115.code
_VALUE_HINT = (
    "a label value is empty or at most 63 letters, digits, '-', '_' and '.', beginning and"
    " ending with a letter or digit; write the value your objects carry"
)
_KEY_HINT = (
    "a label key is [prefix/]name: the name at most 63 letters, digits, '-', '_' and '.',"
    " beginning and ending with a letter or digit; the prefix a lower-case DNS subdomain"
    " (for example: app.kubernetes.io/name)"
)


def label_map_problems(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC115 for every key and value of the site's label maps that is no label's."""
    found = []
    for path, labels in _label_maps(site):
        for key, value in labels.items():
            where = pointer((*path, key))
            if not is_label_key(key):
                found.append(
                    Diagnostic(
                        doc.span(where, key=True),
                        Severity.ERROR,
                        CODE,
                        f"{shown(key)} is not a Kubernetes label key",
                        where,
                        _KEY_HINT,
                    )
                )
            if not is_label_value(value):
                found.append(
                    Diagnostic(
                        doc.span(where),
                        Severity.ERROR,
                        CODE,
                        f"{shown(value)} is not a Kubernetes label value",
                        where,
                        _VALUE_HINT,
                    )
                )
    return found


def _label_maps(site: Site) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, str]]]:
    spec = site.spec
    yield ("spec", "dependencies", "prometheus", "selector"), spec.dependencies.prometheus.selector
    yield ("spec", "monitoring", "serviceMonitor", "labels"), spec.monitoring.service_monitor.labels
    for index, pool in enumerate(spec.node_pools):
        if pool.selector is not None:
            yield ("spec", "nodePools", index, "selector"), pool.selector
