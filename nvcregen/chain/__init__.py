"""The chain on top of the stages: one site from file to tree, and the multi-site driver.

`pipeline.py::compile_source` is the whole compiler on one screen; `sites.py` finds a
project's sites, compiles them all and renders or checks `out/`. No stage imports this.
"""
