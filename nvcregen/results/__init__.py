"""Results of readiness runs: typed from `.status` and logs, judged against a site, archived.

`select.py` picks a site's objects among those read and `liveobjects.py` gives their
identity, labels and owners; `models.py` and `payloads.py` parse statuses and ConfigMap
payloads, `runs.py` puts them together per planned test (`logplace.py` and `logruns.py` do
the same from trainer-mode logs), `figures.py` computes medians and spreads, `verdicts.py`
judges, `archivefiles.py` and `archive.py` write and verify the archive. Never imports
`nvcregen.collect`, which calls it.
"""
