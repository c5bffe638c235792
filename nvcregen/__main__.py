"""Run the command line as `python -m nvcregen`."""

from nvcregen.cli import entrypoint

entrypoint()
