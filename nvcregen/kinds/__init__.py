"""Test kinds as plug-ins: one package a kind, one protocol, registered once by module name.

A kind's package holds its catalog block's model (`params.py`, importing only `core` and
`spec`), its `TestKind` (`kind.py`, `KIND`) and, once moved above the layers it
implements, what those layers ask of it (its log reader, run judge, log maker, script
template, NVC codes). `kindapi/registry.py` loads it by name; no layer below imports it.
"""
