"""The offline CEL corpus, replayed on a real kube-apiserver: the server refuses each case too.

tests/test_negative_corpus.py (Trainer, JobSet, Flux) and tests/unit/check/test_cel.py
(NVCRE) break one `x-kubernetes-validations` rule per case and check that nvcregen's
offline CEL evaluation reports it. Here each valid base is dry-run on the real server
through nvcregen's own `dry_run_apply` (accepted), each broken create is refused with the
rule's message (HTTP 422) at the field nvcregen reports offline, and each transition
case is refused as an update of the base, which is created for real first.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import test_negative_corpus as corpus
from kubecontrolplane import ControlPlane, collection_path, object_path

from nvcregen.check.server import field_pointer
from nvcregen.cluster.client import Cluster, connect
from nvcregen.cluster.dryrun import DryRunResult, dry_run_apply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "check"))
import test_cel as nvcre

Obj = dict[str, Any]


def bases() -> list[Obj]:
    return [b() for b in corpus.BASES.values()] + [b() for b in nvcre.BASES.values()]


@pytest.fixture(scope="module")
def cluster(control_plane: ControlPlane) -> Cluster:
    """A client of the server, whose namespaces include every base object's."""
    for name in sorted({o["metadata"].get("namespace") for o in bases()} - {None}):
        control_plane.namespace(name)
    return connect(None, control_plane.kubeconfig)


@pytest.fixture(scope="module")
def created(control_plane: ControlPlane, cluster: Cluster) -> set[str]:
    """Every base of both corpora, applied for real (the old object of transition cases)."""
    kinds = set()
    for obj in bases():
        apply(control_plane, obj)
        kinds.add(obj["kind"])
    return kinds


def apply(plane: ControlPlane, obj: Obj) -> Obj:
    """Server-side apply one object for real, as field manager `corpus`."""
    meta = obj["metadata"]
    path = f"{collection_path(obj)}/{meta['name']}?fieldManager=corpus&force=true"
    body = {k: v for k, v in obj.items() if k != "status"}
    result: Obj = plane.ok("PATCH", path, body, content_type="application/apply-patch+yaml")
    return result


def as_new(obj: Obj) -> Obj:
    """The object under a name no object has, so its dry-run is a create, not an update of
    the base `created` applied (which would run transition rules and keep fields the
    base's manager owns)."""
    renamed = copy.deepcopy(obj)
    renamed["metadata"]["name"] += "-new"
    return renamed


def refusal(result: DryRunResult) -> str:
    return json.dumps({"status": result.status_code, "message": result.message}, indent=1)


def assert_refused(result: DryRunResult, message: str, pointer: str | None) -> None:
    assert not result.ok, "the server accepted it"
    assert result.status_code == 422, refusal(result)
    assert message in result.message, refusal(result)
    if pointer is not None:
        fields = [field_pointer(f) for f, m in result.causes if message in m]
        assert fields == [pointer], refusal(result)


@pytest.mark.parametrize("kind", sorted(corpus.BASES) + sorted(nvcre.BASES))
def test_every_base_object_is_accepted(cluster: Cluster, kind: str) -> None:
    base = (corpus.BASES.get(kind) or nvcre.BASES[kind])()
    result = dry_run_apply(cluster, as_new(base))
    assert result.ok, refusal(result)


def dry_run_status(plane: ControlPlane, obj: Obj) -> DryRunResult:
    """Dry-run an apply of `obj`'s status on its status subresource (the object exists)."""
    query = "dryRun=All&fieldManager=corpus&force=true&fieldValidation=Strict"
    path = f"{object_path(obj)}/status?{query}"
    code, body = plane.request("PATCH", path, obj, content_type="application/apply-patch+yaml")
    causes = [
        (c.get("field", ""), c.get("message", ""))
        for c in body.get("details", {}).get("causes", [])
    ]
    return DryRunResult(200 <= code < 300, code, str(body.get("message", "")), causes)


@pytest.mark.parametrize("case", list(corpus.params(corpus.INVALID)))
def test_every_broken_create_is_refused_by_the_server(
    control_plane: ControlPlane, cluster: Cluster, created: set[str], case: Any
) -> None:
    obj = corpus.broken(case)
    if case.path.startswith("status."):
        # The main resource ignores .status (the CRD has a status subresource): a status
        # rule is enforced where the status is written, on the existing object.
        result = dry_run_status(control_plane, obj)
    else:
        result = dry_run_apply(cluster, as_new(obj))
    assert_refused(result, case.message, case.pointer)


@pytest.mark.parametrize("case", list(corpus.params(corpus.CHANGED)))
def test_every_forbidden_change_is_refused_by_the_server(
    cluster: Cluster, created: set[str], case: Any
) -> None:
    assert case.kind in created
    assert_refused(dry_run_apply(cluster, corpus.broken(case)), case.message, case.pointer)


@pytest.mark.parametrize(
    ("kind", "path", "value", "pointer", "message"),
    nvcre.INVALID,
    ids=[f"{i:02d}-{c[0]}-{c[1]}" for i, c in enumerate(nvcre.INVALID)],
)
def test_every_broken_nvcre_object_is_refused_by_the_server(
    cluster: Cluster, kind: str, path: str, value: Any, pointer: str, message: str
) -> None:
    obj = nvcre.mutated(kind, path, copy.deepcopy(value))
    assert_refused(dry_run_apply(cluster, as_new(obj)), message, pointer or None)


@pytest.mark.parametrize(
    ("kind", "path", "value", "message"),
    nvcre.CHANGED,
    ids=[f"{i:02d}-{c[0]}-{c[1]}" for i, c in enumerate(nvcre.CHANGED)],
)
def test_every_forbidden_nvcre_change_is_refused_by_the_server(
    cluster: Cluster, created: set[str], kind: str, path: str, value: Any, message: str
) -> None:
    assert kind in created
    obj = nvcre.mutated(kind, path, copy.deepcopy(value))
    assert_refused(dry_run_apply(cluster, obj), message, None)
