"""The readiness layer: what both readiness engines' runs share, and how it asks for them.

Each readiness engine's own objects are in its package (`engines/readiness/nvcre/`:
Certifications, WorkloadRuns, LogProfile and the preview; `engines/readiness/trainer/`:
TrainingRuntimes, TrainJobs, per-node, pair, packed and periodic Jobs), asked through
`engineparts.ReadinessObjects`. Here: the layers' names (`components.py`), a pod's
resources and tolerations (`pods.py`), the RDMA pod network (`network.py`), a per-node
test's script (`nodescript.py`), a collective kind's launch (`launch.py`) and the Kubeflow
Trainer building blocks both engines write (`mpi.py`); NVCRE's two name limits, which the
monitoring layer's alerts read (`nvcre.py`).
"""
