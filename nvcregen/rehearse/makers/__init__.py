"""Each test kind's rehearsal log maker, one module a kind, registered in `registry.py`.

A maker prints what its kind's script would print on a pod of the twin (`printer.py`'s
`Maker`), from the plan's expected figures, or failing in the kind's own terms on a
failing node; `collect` reads it back with the reader it uses on a cluster.
"""
