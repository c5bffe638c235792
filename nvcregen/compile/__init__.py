"""Compilers from a planned site to Kubernetes objects, one package per output layer.

Each package matches a folder of `out/<site>/`: `platform/` (namespaces, RBAC, NVCRE and
Trainer), `monitoring/` (ServiceMonitor, rules, alerts, dashboard), `readiness/` (NVCRE
Certifications and WorkloadRuns, or Trainer TrainJobs and DCGM Jobs), `gitops/` (Argo CD or
Flux objects). `layers.py` assembles them in apply order, `postprocess.py` labels and
sorts, `imagelist.py` lists every image, `templating.py` renders the script templates.
"""
