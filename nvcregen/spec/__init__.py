"""The Site language: YAML read with positions, the pydantic models, the published schema.

`load.py` and `_events.py` turn bytes into data and positions (YAML traps as NVC1xx),
`positions.py` turns a JSON pointer into `file:line:column`, `v1alpha1.py` holds the models,
`parse.py` builds frozen models from data with errors at their source, `schema.py` writes
`schemas/site.v1alpha1.json`, `fast.py` reads YAML whose positions are rarely needed.
"""
