"""Argo CD: an Application per layer under a parent, steps ordered by sync waves."""
