"""The engines' seam: the protocols every engine implements and the registry that loads them.

A readiness engine (`spec.readiness.engine`) and a GitOps engine (`spec.gitops.engine`)
each live in their own package (`nvcregen/engines/readiness/<engine>/`,
`nvcregen/engines/gitops/<engine>/`), above every layer they implement; the layers below
find an engine only through `registry.readiness_of(site)` / `registry.gitops_of(site)`,
read its traits, and ask for what more they need with `registry.part_of`, which imports
the engine's module by name on first use: no module below `nvcregen.engines` imports an
engine, and none compares an engine's name.
"""
