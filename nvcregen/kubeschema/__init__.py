"""The schema registry: every generated kind's schema, offline.

`registry.py` finds the vendored upstream CRD schema (or the core schema from
`builtin.py`) of an object; `openapi.py` turns structural OpenAPI into JSON Schema,
`kubejsonschema.py` validates with the Kubernetes extensions, `normalize.py` copies objects
into plain JSON, `objectmeta.py` holds the ObjectMeta rules CRDs leave to the API server,
`problems.py` locates what was found. Used by `check` and by the render gate.
"""
