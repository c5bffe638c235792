"""The test plan of a site: what runs where, its images, how long it takes, what it costs.

`resolve.py` turns a site and the catalog into ordered test units (built once per site and
passed down to every layer), `images.py` resolves image pins and the mirror, `budget.py`
adds up GPU-hours and wall time against the window. The physics model of each run:

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
