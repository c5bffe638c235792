"""Results of readiness runs: typed from `.status`, judged against a site, archived.

`models.py` and `payloads.py` parse statuses and ConfigMap payloads, `runs.py` puts
them together per planned test, `figures.py` computes medians and spreads,
`verdicts.py` judges, `summary.py` and `archive.py` write and verify the archive.
"""
