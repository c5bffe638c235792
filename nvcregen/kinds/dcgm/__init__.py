"""DCGM diagnostics (`dcgmi diag -r LEVEL`), once on each node."""
