"""`nvcregen quarantine --apply` against a real kube-apiserver's Nodes (issue #22).

tests/test_quarantine.py runs against `nodeapi.FakeNodes`, a model of server-side
apply's field ownership; here the same archives meet the real thing: Node objects on the
control plane (no kubelet: they are API objects), written first by a `kubelet` field
manager, with the real ownership of labels (key by key) and of the atomic taint list,
the real resourceVersion precondition, and faults through tests/faultproxy.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_quarantine as offline
from click.testing import CliRunner
from faultproxy import Fault, Proxy, proxy
from kubecontrolplane import CONTEXT, ControlPlane
from oncallfactory import healthy

from nvcregen.cli import main
from nvcregen.quarantine.marks import KEY, RUN

SITE, OTHER_TAINT = offline.SITE, offline.OTHER_TAINT
NODES = ("node-a", "node-b", "node-c", "node-d")
MARK = {"key": KEY, "value": SITE, "effect": "NoSchedule"}
# Added to every new Node by the API server's TaintNodesByCondition admission plugin
# (the node is not Ready: no kubelet reports for it). The stand-in has no admission.
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def one_failed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """node-a failed alone; node-b suspect; c, d cleared (as in test_quarantine.py)."""
    return offline.collected(tmp_path_factory.mktemp("one"), offline.alone_slow("node-a"))


@pytest.fixture(scope="module")
def retested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """one_failed's run, and a newer run of its site that clears every node: what
    `--release` needs before it takes a node's taint off (issue #37)."""
    run_dir = offline.collected(tmp_path_factory.mktemp("retested"), offline.alone_slow("node-a"))
    offline.collected_after(run_dir, healthy)
    return run_dir


@pytest.fixture(scope="module")
def two_failed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline.collected(tmp_path_factory.mktemp("two"), offline.alone_slow("node-a", "node-c"))


def write(plane: ControlPlane, name: str, manager: str, patch: Obj) -> Obj:
    """A merge patch by a non-apply field manager (kubectl taint, the node controller)."""
    path = f"/api/v1/nodes/{name}?fieldManager={manager}"
    result: Obj = plane.ok("PATCH", path, patch, content_type="application/merge-patch+json")
    return result


@pytest.fixture
def nodes(control_plane: ControlPlane) -> ControlPlane:
    """node-a to node-d, fresh, labelled `pool=h20` by the kubelet; node-a with a taint
    (and each with the not-ready taint admission adds)."""
    for name in NODES:
        control_plane.request("DELETE", f"/api/v1/nodes/{name}")
        spec = {"taints": [OTHER_TAINT]} if name == "node-a" else {}
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"pool": "h20"}},
            "spec": spec,
        }
        created = control_plane.ok("POST", "/api/v1/nodes?fieldManager=kubelet", node)
        assert created["spec"]["taints"] == [*spec.get("taints", []), NOT_READY]
    return control_plane


def node(plane: ControlPlane, name: str) -> Obj:
    code, body = plane.request("GET", f"/api/v1/nodes/{name}")
    assert code == 200, body
    result: Obj = body
    return result


def owners(live: Obj, *path: str) -> set[str]:
    """The managers whose managedFields name the field at `path` (f: keys)."""
    found = set()
    for entry in live["metadata"].get("managedFields", []):
        fields = entry.get("fieldsV1", {})
        for step in path:
            fields = fields.get(f"f:{step}", None) if isinstance(fields, dict) else None
        if fields is not None:
            found.add(entry["manager"])
    return found


def run(run_dir: Path, kubeconfig: Path, *extra: str) -> Any:
    args = ["quarantine", str(run_dir), "--context", CONTEXT, "--kubeconfig", str(kubeconfig)]
    return CliRunner().invoke(main, [*args, "--site", offline.site_of(run_dir), *extra])


@pytest.fixture
def through(nodes: ControlPlane, tmp_path: Path) -> Iterator[tuple[Proxy, Path]]:
    with proxy(nodes) as faults:
        yield faults, nodes.write_kubeconfig(tmp_path / "proxied", url=faults.url)
        assert faults.errors == []


def test_apply_sets_the_mark_keeps_every_other_taint_and_touches_no_other_node(
    one_failed: Path, nodes: ControlPlane
) -> None:
    before = {n: node(nodes, n)["metadata"]["resourceVersion"] for n in NODES}
    result = run(one_failed, nodes.kubeconfig, "--apply")
    assert result.exit_code == 0, result.output
    assert "node-a: set" in result.output
    live = node(nodes, "node-a")
    assert live["spec"]["taints"] == [OTHER_TAINT, NOT_READY, MARK]
    assert live["metadata"]["labels"] == {"pool": "h20", KEY: SITE}
    assert live["metadata"]["annotations"][RUN] == f"{SITE}/{one_failed.name}"
    assert owners(live, "metadata", "labels", KEY) == {"nvcregen"}
    assert owners(live, "metadata", "labels", "pool") == {"kubelet"}
    assert "nvcregen" in owners(live, "spec", "taints")
    for name in NODES[1:]:
        assert node(nodes, name)["metadata"]["resourceVersion"] == before[name]


def test_a_second_apply_writes_nothing(
    one_failed: Path, nodes: ControlPlane, through: tuple[Proxy, Path]
) -> None:
    faults, config = through
    assert run(one_failed, config, "--apply").exit_code == 0
    version = node(nodes, "node-a")["metadata"]["resourceVersion"]
    faults.seen.clear()
    again = run(one_failed, config, "--apply")
    assert again.exit_code == 0
    assert "node-a: already set" in again.output
    assert [method for method, _ in faults.seen] == ["GET"]
    assert node(nodes, "node-a")["metadata"]["resourceVersion"] == version


def test_release_takes_off_exactly_what_it_set(
    one_failed: Path, retested: Path, nodes: ControlPlane
) -> None:
    before = node(nodes, "node-a")
    assert run(retested, nodes.kubeconfig, "--apply").exit_code == 0
    # no newer run clears node-a: nothing is sent, and the missing evidence is named
    refused = run(one_failed, nodes.kubeconfig, "--apply", "--release")
    assert refused.exit_code == 1 and "no verified run newer than" in refused.output
    assert any(t.get("key") == KEY for t in node(nodes, "node-a")["spec"]["taints"])
    released = run(retested, nodes.kubeconfig, "--apply", "--release")
    assert released.exit_code == 0, released.output
    assert "node-a: released" in released.output
    after = node(nodes, "node-a")
    assert after["spec"]["taints"] == before["spec"]["taints"] == [OTHER_TAINT, NOT_READY]
    assert after["metadata"]["labels"] == before["metadata"]["labels"]
    assert after["metadata"].get("annotations", {}) == before["metadata"].get("annotations", {})


def test_release_after_another_controller_rewrote_the_taint_list(
    retested: Path, nodes: ControlPlane
) -> None:
    """The node controller writes the list (an update, not an apply): the taint still
    comes off, and the controller's other taint stays."""
    assert run(retested, nodes.kubeconfig, "--apply").exit_code == 0
    extra = {"key": "example.com/maintenance", "effect": "NoExecute"}
    taints = [*node(nodes, "node-a")["spec"]["taints"], extra]
    live = write(nodes, "node-a", "node-controller", {"spec": {"taints": taints}})
    assert "node-controller" in owners(live, "spec", "taints")
    released = run(retested, nodes.kubeconfig, "--apply", "--release")
    assert released.exit_code == 0, released.output
    assert node(nodes, "node-a")["spec"]["taints"] == [OTHER_TAINT, NOT_READY, extra]


def test_a_taint_added_between_read_and_apply_is_kept(
    one_failed: Path, nodes: ControlPlane, through: tuple[Proxy, Path]
) -> None:
    late = {"key": "late/taint", "effect": "NoSchedule"}

    def race() -> None:
        taints = [OTHER_TAINT, NOT_READY, late]
        write(nodes, "node-a", "kubectl-taint", {"spec": {"taints": taints}})

    faults, config = through
    faults.faults.append(Fault("nodes", "PATCH", before=race))
    result = run(one_failed, config, "--apply")
    assert result.exit_code == 0, result.output
    assert [method for method, _ in faults.seen] == ["GET", "PATCH", "GET", "PATCH"]
    live = node(nodes, "node-a")
    assert live["spec"]["taints"] == [OTHER_TAINT, NOT_READY, late, MARK]
    assert live["metadata"]["labels"][KEY] == SITE


def test_an_api_failing_half_way_stops_and_a_rerun_finishes(
    two_failed: Path, nodes: ControlPlane, through: tuple[Proxy, Path]
) -> None:
    faults, config = through
    faults.faults.append(Fault("node-c", "GET", code=500, times=99))
    first = run(two_failed, config, "--apply")
    assert first.exit_code != 0
    assert "node-a: set" in first.output
    assert "HTTP 500" in first.output
    assert KEY not in node(nodes, "node-c")["metadata"]["labels"]
    faults.faults.clear()
    again = run(two_failed, config, "--apply")
    assert again.exit_code == 0, again.output
    assert "node-a: already set" in again.output and "node-c: set" in again.output
    assert node(nodes, "node-c")["spec"]["taints"] == [NOT_READY, MARK]


def test_a_failed_node_missing_from_the_cluster_exits_1(
    one_failed: Path, nodes: ControlPlane
) -> None:
    nodes.ok("DELETE", "/api/v1/nodes/node-a")
    result = run(one_failed, nodes.kubeconfig, "--apply")
    assert result.exit_code == 1
    assert "node-a: missing" in result.output
    assert all(KEY not in node(nodes, n)["metadata"]["labels"] for n in NODES[1:])
