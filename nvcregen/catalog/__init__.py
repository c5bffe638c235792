"""The catalog: GPU hardware, tests, baselines and default images, read from `catalog/`.

`models.py` types the entries, `kindblocks.py` adds each registered kind's block to a test's,
`load.py` reads and indexes them, `browse.py` shows them (`nvcregen catalog list|show`).
"""
