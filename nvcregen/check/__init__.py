"""`nvcregen check` and the render gate: generated objects against upstream rules.

`gate.py` checks objects in memory before render writes them; `cel*.py` evaluate CRD CEL
rules, `webhooks.py` the rules only admission webhooks enforce, `policy.py` nvcregen's own
policies, `crossref.py` checks across objects; `tree.py`, `reader.py` and `parallel.py` read
and check a written tree; `server.py` dry-runs on a real API server; `checker.py` is the
command behind the CLI.
"""
