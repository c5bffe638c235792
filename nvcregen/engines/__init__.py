"""Readiness and GitOps engines as plug-ins: one package an engine, a protocol, a registry.

A readiness engine (`readiness/nvcre/`, `readiness/trainer/`: `spec.readiness.engine`)
and a GitOps engine (`gitops/argocd/`, `gitops/flux/`: `spec.gitops.engine`) each say
what the layers ask of them; every other module asks `registry.readiness_of(site)` or
`registry.gitops_of(site)` and reads a trait, never compares an engine's name.
"""
