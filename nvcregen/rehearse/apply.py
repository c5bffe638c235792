"""Objects applied server-side, as Argo CD (`ServerSideApply=true`) and Flux apply them.

Each object goes to its URL, found through the API server's discovery (its plural, and
whether it is namespaced), as a server-side apply (`application/apply-patch+yaml`; JSON
is YAML) with field manager `nvcregen-rehearse` and `force`. A refusal (a webhook's, the
API server's) is returned as text, never raised: the step records it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nvcregen.rehearse.controlplane import ControlPlane

FIELD_MANAGER = "nvcregen-rehearse"
APPLY = "application/apply-patch+yaml"


@dataclass
class Discovery:
    """Kind -> (plural, namespaced) per group/version, read from the API server once each."""

    plane: ControlPlane
    known: dict[str, dict[str, tuple[str, bool]]] = field(default_factory=dict)

    def resource(self, api_version: str, kind: str) -> tuple[str, bool] | None:
        """The plural and scope of `kind` in `api_version`; None when it is not served."""
        if api_version not in self.known or kind not in self.known[api_version]:
            base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
            code, body = self.plane.request("GET", base)
            served = (body or {}).get("resources") or [] if code == 200 else []
            self.known[api_version] = {
                r["kind"]: (r["name"], bool(r.get("namespaced")))
                for r in served
                if isinstance(r, dict) and "/" not in str(r.get("name", ""))
            }
        return self.known[api_version].get(kind)

    def path(self, obj: Mapping[str, Any], default_namespace: str = "default") -> str | None:
        """The URL path of one object; None when its kind is not served."""
        api, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        found = self.resource(api, kind)
        if found is None:
            return None
        plural, namespaced = found
        base = f"/apis/{api}" if "/" in api else f"/api/{api}"
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        if namespaced:
            return f"{base}/namespaces/{meta.get('namespace') or default_namespace}/{plural}/{name}"
        return f"{base}/{plural}/{name}"


def apply(plane: ControlPlane, discovery: Discovery, obj: Mapping[str, Any]) -> str:
    """Apply one object server-side; "" when the server took it, else why not."""
    path = discovery.path(obj)
    if path is None:
        return f"the API server serves no {obj.get('kind')} in {obj.get('apiVersion')}"
    query = f"?fieldManager={FIELD_MANAGER}&force=true"
    code, answer = plane.request("PATCH", path + query, dict(obj), content_type=APPLY)
    if 200 <= code < 300:
        return ""
    message = answer.get("message") if isinstance(answer, dict) else answer
    return f"HTTP {code}: {message}"
