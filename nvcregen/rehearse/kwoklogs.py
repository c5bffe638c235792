"""kwok serving a pod's log from a file: its `Logs` objects, their CRD, CRI's file format (pure).

kwok v0.8.0 answers the API server's `GET .../pods/<pod>/log` from a `Logs` object
(`kwok.x-k8s.io/v1alpha1`, namespaced, named after the pod: `spec.logs[].containers`,
`logsFile`) before any `ClusterLogs` selector (`pkg/kwok/server/debugging_logs.go`,
`getPodLogs`). Started with `--enable-crds=Logs` it watches them in the API server, so
a rehearsal adds one per pod as it runs; the CRD must exist before kwok starts (its
informer lists them). `LOGS_CRD` is that CRD with the fields kwok reads, the rest of
the object kept as written (kwok's own is generated from its Go types and not among the
manifests `make twin` copies). kwok opens the file on each request and reads it in CRI
format (`k8s.io/cri-client/pkg/logs`): `<RFC 3339 time> stdout F <line>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

GROUP = "kwok.x-k8s.io"
VERSION = "v1alpha1"
LOGS_KIND = "Logs"
LOGS_PATH = f"/apis/{GROUP}/{VERSION}/namespaces/{{namespace}}/logs"
LOGS_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"logs.{GROUP}"},
    "spec": {
        "group": GROUP,
        "names": {"kind": LOGS_KIND, "listKind": "LogsList", "plural": "logs", "singular": "logs"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "logs": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "containers": {
                                                    "type": "array",
                                                    "items": {"type": "string"},
                                                },
                                                "logsFile": {"type": "string"},
                                                "previousLogsFile": {"type": "string"},
                                                "follow": {"type": "boolean"},
                                            },
                                        },
                                    }
                                },
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def logs_object(
    namespace: str, pod: str, path: Path, containers: Sequence[str] = ()
) -> dict[str, Any]:
    """The `Logs` object serving `path` as the log of pod `namespace/pod`'s `containers`.

    Without `containers`, of every container of the pod (kwok's default entry).
    """
    log: dict[str, Any] = {"logsFile": str(path), "follow": False}
    if containers:
        log["containers"] = list(containers)
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": LOGS_KIND,
        "metadata": {"name": pod, "namespace": namespace},
        "spec": {"logs": [log]},
    }


def cri_text(text: str, at: datetime, stream: str = "stdout") -> str:
    """`text` as a CRI runtime writes a container's log: one full (`F`) record per line."""
    stamp = at.strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
    return "".join(f"{stamp} {stream} F {line}\n" for line in text.splitlines())
