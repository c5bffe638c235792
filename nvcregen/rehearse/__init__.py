"""Rehearse a rendered site on the real controllers, on fake GPU nodes (issue #34).

The twin (`make twin`: kwok, kube-scheduler, Kueue, JobSet, Trainer, Flux) beside a control
plane of its own (etcd, kube-apiserver, kube-controller-manager, `make controlplane`), all
started here as child processes in their own process groups, and stopped with the command:
docs/design/0019-twin.md.
"""
