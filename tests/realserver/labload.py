"""The `lab` site's cluster state (tests/unit/collect/labstate.py), created on the real server.

labstate.py writes objects as the API server returns them, with made-up uids and
resourceVersions. Here each object is created for real, in a namespace of the test's
own (so tests sharing the session's server never see each other's objects): owners
first, each owner reference pointing at the uid the server gave its owner, and every
made-up uid elsewhere (a ReportExport's sourceRef, a label) replaced the same way; a
custom resource's status is then written through its status subresource, as NVCRE does.

The server sets each object's `creationTimestamp` to now, and collect refuses a
measurement timed before its Certification or WorkloadRun was created (NVC746): every time
in a status is moved to its object's creation time (a second's precision), so the real
server's state has the made-up state's verdicts.
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path
from typing import Any

from kubecontrolplane import ControlPlane, object_path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "collect"))
from labstate import NS, lab_state  # noqa: E402

__all__ = ["NS", "SERVER_SET", "SITE_FILE", "lab_state", "load", "site_file"]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
Obj = dict[str, Any]
SERVER_SET = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")


def site_file(folder: Path, namespace: str) -> Path:
    """The lab site, its NVCRE namespace set to `namespace`."""
    text = SITE_FILE.read_text("utf-8")
    assert text.count(f"namespace: {NS}\n") == 1
    path = folder / "site.yaml"
    path.write_text(text.replace(f"namespace: {NS}\n", f"namespace: {namespace}\n"), "utf-8")
    return path


def moved(value: Any, namespace: str, uids: dict[str, str]) -> Any:
    """`value` with the namespace `nvcre` and every made-up uid replaced."""
    if isinstance(value, dict):
        return {k: moved(v, namespace, uids) for k, v in value.items()}
    if isinstance(value, list):
        return [moved(v, namespace, uids) for v in value]
    if value == NS:
        return namespace
    return uids.get(value, value) if isinstance(value, str) else value


def at(value: Any, when: str) -> Any:
    """`value` with every RFC 3339 time in it replaced by `when`."""
    if isinstance(value, dict):
        return {k: at(v, when) for k, v in value.items()}
    if isinstance(value, list):
        return [at(v, when) for v in value]
    return when if isinstance(value, str) and _TIME.fullmatch(value) else value


def load(plane: ControlPlane, namespace: str, objects: list[Obj] | None = None) -> list[Obj]:
    """Create the lab state (or `objects` of it) in `namespace`; the objects as stored."""
    plane.namespace(namespace)
    state = copy.deepcopy(objects if objects is not None else lab_state())
    # The site's owners first: other objects name their uids (a ReportExport's sourceRef).
    pending = sorted(state, key=lambda o: o["kind"] not in {"Certification", "WorkloadRun"})
    uids: dict[str, str] = {}
    stored: list[Obj] = []
    while pending:
        ready = [
            o
            for o in pending
            if all(r["uid"] in uids for r in o["metadata"].get("ownerReferences") or [])
        ]
        assert ready, "an owner is missing from the state"
        for obj in ready:
            pending.remove(obj)
            made_up = obj["metadata"]["uid"]
            body = moved(obj, namespace, uids)
            for key in SERVER_SET:
                body["metadata"].pop(key, None)
            status = body.pop("status", None)
            created = plane.create(body)
            uids[made_up] = created["metadata"]["uid"]
            if status is not None:
                when = created["metadata"]["creationTimestamp"]
                created = plane.ok(
                    "PATCH",
                    f"{object_path(created)}/status",
                    {"status": at(moved(status, namespace, uids), when)},
                    content_type="application/merge-patch+json",
                )
            stored.append(created)
    return stored
