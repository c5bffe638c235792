"""`nvcregen diff`: what a change to the sites does, in hardware terms and object by object.

`report.py` compiles the sites of a Git revision (read through `nvcregen.gitrev`) and of the
working tree in memory; `domain.py` summarises the change in plan terms (GPUs, tests,
thresholds, budget), `objectdiff.py` compares the objects field by field, `render.py` prints
the report as text, Markdown or JSON.
"""
