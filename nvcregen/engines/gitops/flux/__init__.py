"""Flux: a Kustomization per layer and per step, ordered by dependsOn."""
