"""The twin starts controllers that need only their CRDs and a namespace (`start_controllers`).

On a fake control plane with stand-in binaries (tests/faketwin.py); what a GitOps engine
starts with it is tested with the engine (tests/unit/engines/test_flux_controllers.py),
the real controllers in tests/realserver/test_twin_flux.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faketwin import CRDS, crd, fake_controller, fake_twin, recorded

from nvcregen.rehearse.controlplane import ControlPlaneError
from nvcregen.rehearse.processes import free_port
from nvcregen.rehearse.twin import Controller

pytestmark = pytest.mark.slow  # each test spawns processes


def controller(name: str, role: str) -> Controller:
    """A stand-in named `name`, healthy on a free port, `ROLE=<role>` in its environment."""
    port = free_port()
    args = (f"--health-addr=127.0.0.1:{port}", f"--role={role}")
    return Controller(name, args, f"http://127.0.0.1:{port}/readyz", {"ROLE": role})


def test_each_controller_starts_after_the_crds_and_namespace_with_the_admin_kubeconfig(
    tmp_path: Path,
) -> None:
    twin, plane = fake_twin(tmp_path)
    try:
        for name in ("first", "second"):
            fake_controller(twin, name)
        crds = [crd("demo.example.com", "widgets", "Widget")]
        wanted = [controller("first", "a"), controller("second", "b")]
        twin.start_controllers("demo", "demo-system", crds, wanted)

        assert [r.body for r in plane.posted(CRDS)] == crds
        (namespace,) = plane.posted("/api/v1/namespaces")
        assert namespace.body["metadata"]["name"] == "demo-system"
        # every request (the CRDs, discovery, the namespace) before any controller ran
        assert [r.running for r in plane.requests] == [()] * len(plane.requests)
        assert list(twin.processes) == ["first", "second"]
        for started in wanted:
            record = recorded(twin, started.name) or {}
            assert record["args"] == list(started.args)
            assert record["env"]["KUBECONFIG"] == str(plane.kubeconfig)
            assert record["env"]["ROLE"] == started.env["ROLE"]
        assert {"demo", "first", "second"} <= set(twin.timings)
        assert twin.timings["demo"] >= twin.timings["first"] + twin.timings["second"]
    finally:
        twin.stop()


def test_a_controller_that_exits_ends_the_start_before_the_next(tmp_path: Path) -> None:
    twin, _ = fake_twin(tmp_path)
    try:
        fake_controller(twin, "first", healthy=False)
        fake_controller(twin, "second")
        wanted = [controller("first", "a"), controller("second", "b")]
        with pytest.raises(ControlPlaneError, match=r"^first exited \(3\)"):
            twin.start_controllers("demo", "demo-system", [], wanted)
        assert recorded(twin, "first") is not None
        assert recorded(twin, "second") is None  # never started: the first was not healthy
        assert "demo" not in twin.timings
    finally:
        twin.stop()
