"""Maintenance commands run from the repository root (`python -m tools.<name>`)."""
