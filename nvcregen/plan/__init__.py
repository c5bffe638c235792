"""The physics model of readiness runs: how long each takes and what its links can carry.

Pure functions of the catalog (hardware links, test parameters, `catalog/physics.yaml`,
measured baselines) and a planned test (`nvcregen.compile.plan.TestUnit`):

- `run`: one job of a test reduced to what physics needs (GPUs, nodes, NICs, collective).
- `bandwidth`: the links every byte must cross (a GPU's NVLink or PCIe link, a node's
  NICs), and the bus bandwidth each allows: a sound ceiling and NCCL's typical bound.
- `evidence`: measured baselines; a measurement above a computed bound shows the declared
  link rate undercounts that path, and lifts the ceiling instead of being called impossible.
- `sweep`: the message sizes and calls nccl-tests makes for the catalog's parameters.
- `physics`: the public API: expected and bounding bus bandwidth, expected duration,
  timeouts (expected duration x the site's timeoutFactor, whole minutes) and GPU-hours.

The arithmetic, with every catalog baseline worked through, is docs/design/0005-physics.md.
"""
