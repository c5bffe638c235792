"""Writing trees: canonical YAML, file names, index.json, atomic per-site replacement.

`canonical.py` is the only YAML dumper, `naming.py` maps objects to paths, `tree.py`
builds the in-memory tree and its index, `writer.py` is the only module that writes
`out/`, `cache.py` lets `render --check` skip sites whose inputs did not change.
"""
