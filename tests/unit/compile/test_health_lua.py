"""The Argo CD health scripts, run in a real Lua 5.1 the way Argo CD runs them.

Argo CD (v3.5) runs a `resource.customizations.health.<group>_<kind>` script in gopher-lua,
a Lua 5.1, with a global `obj` (the live object) and only the base, package, table and a
safe os library open; the script returns `{status = ..., message = ...}`. Here the scripts
run in lupa's Lua 5.1 (`lupa.lua51`; the runtime in use is `RUNTIME`) with every other
library removed, strings without methods included, against runs shaped as upstream writes
them (`healthfactory`).
"""

from __future__ import annotations

from typing import Any

import pytest
from healthfactory import CASES, EXPECTED, KINDS, WORKLOAD_CASES, run

from nvcregen.compile.gitops.healthchecks import HEALTH_CHECKS, WORKLOAD, check_for
from nvcregen.engines.gitops.argocd import livehealth as rehearse_health
from nvcregen.engines.gitops.argocd.health import (
    argocd_health_keys,
    argocd_key,
    lua_file,
    lua_script,
)

# The runtime is the rehearsal's (`engines/gitops/argocd/livehealth.py`): lupa's Lua 5.1, with what
# gopher-lua opens for Argo CD (base, package, table, and os without io or exit).
lua_module = rehearse_health.lua_module()
RUNTIME = lua_module.__name__
# Argo CD's statuses; anything else reads as Unknown (and an error fails a sync wave).
ARGO_STATUSES = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}
_runtime = rehearse_health.lua_runtime
_to_lua = rehearse_health.to_lua


def health(script: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Run one health script on one object; its result as a dict."""
    lua = _runtime()
    lua.globals().obj = _to_lua(lua, obj)
    result = lua.execute(script)
    assert lua_module.lua_type(result) == "table", f"the script returned {result!r}"
    return dict(result.items())


def script_of(kind: str) -> str:
    check = next(c for c in HEALTH_CHECKS if c.kind == kind)
    return lua_script(lua_file(check))


def test_the_runtime_is_lua_5_1_like_argo_cds() -> None:
    lua = _runtime()
    assert RUNTIME == "lupa.lua51"
    assert lua.eval("_VERSION") == "Lua 5.1"


def test_the_sandbox_leaves_only_what_argo_cd_opens() -> None:
    """The sandbox is real: a script using the string library fails as in Argo CD."""
    lua = _runtime()
    assert lua.eval("type(table.insert)") == "function"
    assert lua.eval("type(ipairs)") == "function"
    assert lua.eval("string == nil and math == nil and io == nil")
    with pytest.raises(lua_module.LuaError):
        lua.execute('return ("Failed"):lower()')
    with pytest.raises(lua_module.LuaError):
        lua.execute("return os.exit(1)")


@pytest.mark.parametrize(("kind", "state"), CASES)
def test_argo_cd_health_of_each_state(kind: str, state: str) -> None:
    result = health(script_of(kind), run(kind, state))
    assert set(result) == {"status", "message"}
    assert result["status"] in ARGO_STATUSES
    assert isinstance(result["message"], str)
    assert result["message"]
    assert result["status"] == EXPECTED[kind][state][0], result["message"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_run_says_why(kind: str) -> None:
    """The message names the failing condition's reason, so the sync says which run failed."""
    failed = health(script_of(kind), run(kind, "failed"))
    timed_out = health(script_of(kind), run(kind, "timed-out"))
    reasons = {
        "Certification": "WorkflowFailed",
        "WorkloadRun": "WorkflowFailed",
        "TrainJob": "FailedJobs",
        "Job": "BackoffLimitExceeded",
    }
    assert reasons[kind] in failed["message"]
    assert "Failed" in failed["message"]
    timeout_word = "timed out" if kind in {"Certification", "WorkloadRun"} else "DeadlineExceeded"
    assert timeout_word in timed_out["message"]


def test_a_job_kueue_resumed_is_progressing_not_healthy() -> None:
    """Argo CD's built-in Job check takes Suspended=False as final; ours waits for the end."""
    job = run("Job", "resumed-running")
    (suspended,) = job["status"]["conditions"]
    assert (suspended["type"], suspended["status"]) == ("Suspended", "False")
    result = health(script_of("Job"), job)
    assert result["status"] == "Progressing"
    assert "active 1" in result["message"]


@pytest.mark.parametrize("kind", ["TrainJob", "Job"])
def test_failed_wins_over_complete(kind: str) -> None:
    """A run reporting both is not Healthy: a wave never passes on a contradiction."""
    obj = run(kind, "succeeded")
    failed = run(kind, "failed")["status"]["conditions"][-1]
    obj["status"]["conditions"].append(failed)
    assert health(script_of(kind), obj)["status"] == "Degraded"


def test_nvcre_failed_wins_even_if_succeeded_is_also_true() -> None:
    obj = run("Certification", "succeeded")
    for condition in obj["status"]["conditions"]:
        if condition["type"] == "Failed":
            condition["status"] = "True"
    assert health(script_of("Certification"), obj)["status"] == "Degraded"


def test_every_kind_has_one_script_and_one_argocd_key() -> None:
    keys = argocd_health_keys()
    assert sorted(keys) == sorted(
        [
            "resource.customizations.health.nvcre.nvidia.com_Certification",
            "resource.customizations.health.nvcre.nvidia.com_WorkloadRun",
            "resource.customizations.health.trainer.kubeflow.org_TrainJob",
            "resource.customizations.health.batch_Job",
            "resource.customizations.health.argoproj.io_Application",
            "resource.customizations.health.kueue.x-k8s.io_Workload",
        ]
    )
    for kind in KINDS:
        obj = run(kind, "not-started")
        check = check_for(obj["apiVersion"], kind)
        assert check is not None
        assert keys[argocd_key(check)] == lua_script(lua_file(check))


def _app(
    health_status: str | None, sync: str | None = "Synced", phase: str | None = None
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if health_status is not None:
        status["health"] = {"status": health_status, "message": "from the child"}
    if sync is not None:
        status["sync"] = {"status": sync}
    if phase is not None:
        status["operationState"] = {"phase": phase, "message": "webhook not ready"}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "status": status}


APPLICATION = "resource.customizations.health.argoproj.io_Application"


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        (_app(None, None), "Progressing"),  # just created: nothing reported yet
        (_app("Healthy", "OutOfSync"), "Progressing"),  # healthy, its sync still to come
        (_app("Healthy", "Synced", "Running"), "Healthy"),
        (_app("Healthy"), "Healthy"),
        (_app("Progressing"), "Progressing"),  # e.g. Kueue's Deployment not ready yet
        (_app("Degraded"), "Degraded"),
        (_app("Missing", "OutOfSync"), "Missing"),
        (_app("Healthy", "OutOfSync", "Failed"), "Degraded"),  # retries spent
        (_app("Progressing", "OutOfSync", "Error"), "Degraded"),
    ],
)
def test_a_parent_waits_for_a_layer_application_until_synced_and_healthy(
    app: dict[str, Any], expected: str
) -> None:
    # Argo CD 1.8 removed the built-in Application check: without this key a parent's
    # waves of child Applications waited for nothing (issue 19).
    result = health(argocd_health_keys()[APPLICATION], app)
    assert result["status"] == expected
    assert result["status"] in ARGO_STATUSES
    failed = app["status"].get("operationState", {}).get("phase") in {"Failed", "Error"}
    assert ("webhook not ready" in result["message"]) is failed  # why the sync failed


@pytest.mark.parametrize("check", HEALTH_CHECKS, ids=lambda c: c.kind)
def test_each_script_is_its_header_the_shared_prelude_and_its_body(check: Any) -> None:
    """Argo CD runs one script per kind: the shared helpers are joined in, defined once."""
    script = lua_script(lua_file(check))
    assert script.startswith("-- Argo CD health of ")
    body = script.index("\nlocal result")
    for helper in ("condition_of", "is_true", "describe", "ended", "queued"):
        assert script.count(f"local function {helper}(") == 1, helper
        assert script.index(f"local function {helper}(") < body  # defined before it is used
    assert "prelude.lua" in script  # the header says where the helpers come from


def _workload_health(state: str) -> dict[str, Any]:
    return health(argocd_health_keys()[argocd_key(WORKLOAD)], run("Workload", state))


@pytest.mark.parametrize(("kind", "state"), WORKLOAD_CASES)
def test_argo_cd_health_of_each_workload_state(kind: str, state: str) -> None:
    """A run's prebuilt Workload is Degraded only once Kueue gave up on the run."""
    result = _workload_health(state)
    assert set(result) == {"status", "message"}
    assert result["status"] == EXPECTED[kind][state][0], result["message"]


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ("deactivated", "Deactivated"),
        ("deactivated-while-evicted", "spec.active is false"),
        ("out-of-sync", "OutOfSync"),
        ("failed-to-start", "FailedToStart"),
    ],
)
def test_a_workload_kueue_gave_up_on_names_the_reason(state: str, reason: str) -> None:
    result = _workload_health(state)
    assert result["status"] == "Degraded"
    assert reason in result["message"]


def test_a_deactivated_workload_is_degraded_whatever_its_conditions_say() -> None:
    """Kueue does not evict again a Workload already evicted: spec.active alone decides."""
    obj = run("Workload", "admitted")
    obj["spec"]["active"] = False
    assert health(lua_script(lua_file(WORKLOAD)), obj)["status"] == "Degraded"


def test_the_workload_script_is_its_header_the_prelude_and_its_body() -> None:
    script = lua_script(lua_file(WORKLOAD))
    assert script.startswith("-- Argo CD health of a Kueue Workload")
    assert script.count("local function condition_of(") == 1
    assert script.index("local function condition_of(") < script.index("\nlocal evicted")
