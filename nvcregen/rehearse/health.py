"""The health a GitOps engine reads from a live object, as that engine computes it.

- **Argo CD**: the site's own Lua checks (`argocd-cm`, `resource.customizations.health.
  <group>_<kind>`) run in Lua 5.1 (lupa's `lua51`, as Argo CD's gopher-lua), with `obj`
  the live object and only the base, package and table libraries and a safe `os`; a kind
  without a check is Healthy once it exists (Argo CD's built-in checks for the core kinds
  the rehearsal applies say the same). Argo CD itself is not run.
- **Flux** (kustomize-controller >= v1.5): a Kustomization's `healthCheckExprs` for the
  object's group and kind, in Flux's order (a `status.observedGeneration` behind
  `metadata.generation` is InProgress; then `inProgress`, `failed`, `current`: the first
  true wins, none InProgress; an evaluation error Unknown), on cel-expr-python, the CEL
  engine nvcregen's checks use; without one, a batch/v1 Job by Flux's own Job reader
  (Failed, Complete, and a suspended Job Current, as Flux's replay model says), and anything
  else Current (kstatus calls a kind without conditions Current at once).

Each verdict is one of `HEALTHY`, `FAILED` or `WAITING` (with the engine's own words).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

Verdict = Literal["healthy", "failed", "waiting"]
HEALTHY: Verdict = "healthy"
FAILED: Verdict = "failed"
WAITING: Verdict = "waiting"
_TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec", "status")
# What gopher-lua opens for Argo CD: base, package, table, and os without io or exit.
_SANDBOX = """
local setmetatable_of = debug.setmetatable
local os_lib = os
setmetatable_of("", nil)
string, math, io, debug, coroutine, utf8, bit32 = nil, nil, nil, nil, nil, nil, nil
os = {time = os_lib.time, clock = os_lib.clock, date = os_lib.date, difftime = os_lib.difftime}
"""


class HealthUnavailableError(RuntimeError):
    """A library a health check needs is not installed; the message says which."""


@dataclass(frozen=True)
class Health:
    """One object's health: the verdict and the engine's status and message."""

    verdict: Verdict
    status: str
    message: str = ""


def group_kind(obj: Mapping[str, Any]) -> str:
    """`<group>_<kind>` as Argo CD keys its health checks ("" group for the core API)."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return f"{group}_{obj.get('kind', '')}"


# --- Argo CD --------------------------------------------------------------------------------


@cache
def lua_module() -> Any:
    """The Lua 5.1 of lupa (Argo CD's gopher-lua implements Lua 5.1)."""
    try:
        from lupa import lua51
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise HealthUnavailableError(
            "Argo CD's health checks need lupa (pip install 'nvcregen[rehearse]')"
        ) from exc
    return lua51


def lua_runtime() -> Any:
    """A Lua 5.1 with only what gopher-lua opens for Argo CD (base, package, table, safe os)."""
    lua = lua_module().LuaRuntime(register_eval=False, register_builtins=False)
    lua.execute(_SANDBOX)
    return lua


def to_lua(lua: Any, value: Any) -> Any:
    """JSON-like data as Argo CD hands it to Lua: tables, lists from index 1, no nils."""
    if isinstance(value, dict):
        table = lua.table()
        for key, item in value.items():
            if item is not None:
                table[key] = to_lua(lua, item)
        return table
    if isinstance(value, list):
        table = lua.table()
        for index, item in enumerate(value, start=1):
            table[index] = to_lua(lua, item)
        return table
    return value


def argocd_health(scripts: Mapping[str, str], obj: Mapping[str, Any]) -> Health:
    """Argo CD's health of a live object from the site's Lua checks (Healthy without one).

    Healthy passes a wave; Degraded fails the sync; any other status (Progressing,
    Suspended, Missing, Unknown, a script error) holds it.
    """
    script = scripts.get(group_kind(obj))
    if script is None:
        return Health(HEALTHY, "Healthy", "no health check: healthy once it exists")
    key = _version_key(script, obj)
    known = _ARGOCD_SEEN.get(key) if key is not None else None
    if known is None:
        known = _run_check(script, obj)
        if key is not None:
            if len(_ARGOCD_SEEN) >= SEEN_LIMIT:
                _ARGOCD_SEEN.clear()
            _ARGOCD_SEEN[key] = known
    return known


# Verdicts by (script, uid, resourceVersion): a check is re-run only on an object that
# changed. A wave of 500 TrainJobs and their Workloads was 1,000 Lua runtimes, each fed
# a whole object, every poll (found rehearsing the fleet-size trainer copy).
SEEN_LIMIT = 16384
_ARGOCD_SEEN: dict[tuple[str, str, str], Health] = {}


def _version_key(script: str, obj: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(script, uid, resourceVersion), or None for an object without both (never kept)."""
    meta = obj.get("metadata")
    uid = meta.get("uid") if isinstance(meta, dict) else None
    version = meta.get("resourceVersion") if isinstance(meta, dict) else None
    if isinstance(uid, str) and uid and isinstance(version, str) and version:
        return script, uid, version
    return None


def _run_check(script: str, obj: Mapping[str, Any]) -> Health:
    """Run one Lua check on `obj` in a fresh sandboxed runtime."""
    module = lua_module()
    lua = lua_runtime()
    lua.globals().obj = to_lua(lua, dict(obj))
    try:
        result = lua.execute(script)
    except module.LuaError as exc:
        return Health(WAITING, "Unknown", f"the health check failed: {exc}")
    if module.lua_type(result) != "table":
        return Health(WAITING, "Unknown", "the health check returned no table")
    found = dict(result.items())
    status, message = str(found.get("status", "Unknown")), str(found.get("message", ""))
    if status == "Healthy":
        return Health(HEALTHY, status, message)
    return Health(FAILED if status == "Degraded" else WAITING, status, message)


# --- Flux -----------------------------------------------------------------------------------


@cache
def _cel_env() -> Any:
    from cel_expr_python import cel  # type: ignore[import-untyped]
    from cel_expr_python.ext import ext_optional, ext_strings  # type: ignore[import-untyped]

    return cel, cel.NewEnv(
        variables=dict.fromkeys(_TOP_LEVEL, cel.Type.DYN),
        extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional()],
    )


def _expression_for(exprs: Any, obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    for expr in exprs if isinstance(exprs, list) else []:
        if not isinstance(expr, dict):
            continue
        if str(expr.get("apiVersion", "")).rpartition("/")[0] == group and expr.get("kind") in {
            None,
            obj.get("kind"),
        }:
            return expr
    return None


def flux_health(exprs: Any, obj: Mapping[str, Any]) -> Health:
    """Flux's status of a live object under a Kustomization's `healthCheckExprs`."""
    expr = _expression_for(exprs, obj)
    status: Mapping[str, Any] = obj.get("status") or {}
    if expr is None:
        return _flux_builtin(obj, status)
    generation = (obj.get("metadata") or {}).get("generation")
    observed = status.get("observedGeneration")
    if observed is not None and generation not in {None, observed}:
        return Health(WAITING, "InProgress", "status not observed yet")
    cel, env = _cel_env()
    activation = env.Activation({k: v for k, v in obj.items() if k in _TOP_LEVEL})
    for key, verdict, word in (
        ("inProgress", WAITING, "InProgress"),
        ("failed", FAILED, "Failed"),
        ("current", HEALTHY, "Current"),
    ):
        if not expr.get(key):
            continue
        program, problem = _flux_program(str(expr[key]))
        if program is None:
            return Health(WAITING, "Unknown", f"{key} does not compile: {problem}")
        value = program.eval(activation)
        if value.type() == cel.Type.ERROR:
            return Health(WAITING, "Unknown", f"{key}: {value.plain_value()}")
        if value.type() == cel.Type.BOOL and value.plain_value():
            return Health(verdict, word, f"{key} is true")
    return Health(WAITING, "InProgress", "no expression is true yet")


@cache
def _flux_program(text: str) -> tuple[Any, str]:
    """A health expression compiled once per text, or None and why not.

    A wave's objects share a handful of expressions, each compiled once, not once per
    object and poll. One that does not compile holds the step (Unknown), as
    kustomize-controller reports it, instead of ending the rehearsal with a traceback.
    """
    _, env = _cel_env()
    try:
        return env.compile(text), ""
    except RuntimeError as error:
        return None, str(error).splitlines()[0] if str(error) else "no reason given"


def _flux_builtin(obj: Mapping[str, Any], status: Mapping[str, Any]) -> Health:
    """Without an expression: Flux's Job reader for batch/v1 Jobs, else Current."""
    if (obj.get("apiVersion"), obj.get("kind")) != ("batch/v1", "Job"):
        return Health(HEALTHY, "Current", "no health expression: current once it exists")
    conditions = {
        c.get("type"): c.get("status")
        for c in status.get("conditions") or []
        if isinstance(c, dict)
    }
    if conditions.get("Failed") == "True":
        return Health(FAILED, "Failed", "the Job failed")
    if conditions.get("Complete") == "True":
        return Health(HEALTHY, "Current", "the Job is complete")
    if (obj.get("spec") or {}).get("suspend"):
        return Health(HEALTHY, "Current", "Flux's Job reader calls a suspended Job Current")
    return Health(WAITING, "InProgress", "the Job runs")
