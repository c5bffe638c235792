"""Argo CD's health of a live object, as Argo CD computes it (the rehearsal's; no Argo CD run).

The site's own Lua checks (`argocd-cm`, `resource.customizations.health.<group>_<kind>`)
run in Lua 5.1 (lupa's `lua51`, as Argo CD's gopher-lua), with `obj` the live object and
only the base, package and table libraries and a safe `os`; a kind without a check is
Healthy once it exists (Argo CD's built-in checks for the core kinds the rehearsal applies
say the same). Healthy passes a wave; Degraded fails the sync; any other status holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from nvcregen.rehearse.health import FAILED, HEALTHY, WAITING, Health

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


def health_key(obj: Mapping[str, Any]) -> str:
    """`<group>_<kind>` as Argo CD keys its health checks ("" group for the core API)."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return f"{group}_{obj.get('kind', '')}"


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
    script = scripts.get(health_key(obj))
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
