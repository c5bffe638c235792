"""Flux's health of a live object, as kustomize-controller (>= v1.5) computes it.

A Kustomization's `healthCheckExprs` entry for the object's group and kind, in Flux's
order (a `status.observedGeneration` behind `metadata.generation` is InProgress; then
`inProgress`, `failed`, `current`: the first true wins, none InProgress; an evaluation
error Unknown), on cel-expr-python, the CEL engine nvcregen's checks use; without one, a
batch/v1 Job by Flux's own Job reader (Failed, Complete, and a suspended Job Current, as
Flux's replay model says), and anything else Current (kstatus calls a kind without
conditions Current at once).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from nvcregen.rehearse.health import FAILED, HEALTHY, WAITING, Health

_TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec", "status")


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
