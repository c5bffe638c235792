"""Checks of a site beyond its schema, and the one "load, validate, plan" entry point.

`schema.py` validates against `schemas/site.v1alpha1.json` (NVC2xx), `semantic.py` checks
catalog references, units, fabric and budget (NVC3xx), `trainer.py` the rules of trainer
mode, `site.py` chains loading, validation and planning for every command that needs a site.
"""
