"""Replay a rendered tree through a small model of Kueue, kube-scheduler, Argo CD and Flux.

A checker, not a scheduler: docs/design/0008-replay.md.
"""
