"""The shared vocabulary every layer uses; imports nothing else of nvcregen.

`errors.py` (spans, diagnostics, exit codes), `codes.py` (every NVC code, registered once),
`units.py` (sizes, bandwidth, durations, comparisons), `quantity.py` (Kubernetes
quantities), `manifest.py` (the generated object type), `labels.py` (nvcregen's labels and
annotations), `nvcre.py` (NVCRE's API group and version), `kube.py` (Kubernetes facts:
namespaced kinds, name limits), `metrics.py` (the threshold vocabulary: busbw, algbw,
goodput) and `datafiles.py` (where the packaged catalog and schemas live).
"""
