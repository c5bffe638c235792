"""Health checks that gate readiness stages: Argo CD Lua scripts and Flux CEL expressions.

A GitOps controller can only wait for an object whose health it can tell. Argo CD knows
none of the readiness kinds (NVCRE Certification and WorkloadRun, Trainer TrainJob) and
calls a batch/v1 Job that Kueue resumed healthy while it still runs; Flux takes a
TrainJob, which has no Ready condition, as ready the moment it exists. This package holds
the checks that fix both, as code:

- `*.lua`: Argo CD health scripts (Lua 5.1, the base, package, table and safe os libraries
  only, a global `obj`), shipped as package data and installed once per cluster as
  `argocd-cm` keys `resource.customizations.health.<group>_<kind>`;
- `checks.py`: loads those scripts and defines the Flux `healthCheckExprs` (CEL over the
  object's top-level fields) for the same kinds.

Both are exercised against status objects shaped like the upstream CRDs in
`tests/unit/compile/test_health_lua.py` and `test_health_cel.py`; why they are what they
are: docs/design/0006-stage-gating.md.
"""
