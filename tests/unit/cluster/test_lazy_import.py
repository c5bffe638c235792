"""The offline tool never loads the optional kubernetes client, so it needs no `cluster` extra."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from nvcregen import __version__

PROBE = """
import sys
import nvcregen.cli
import nvcregen.cluster
import nvcregen.check.server
for args in (["--version"], ["check", "--help"]):
    try:
        nvcregen.cli.main(args)
    except SystemExit:
        pass
print(sorted(m for m in sys.modules if m.split(".")[0] in {"kubernetes", "urllib3"}))
"""


@pytest.mark.slow
def test_cli_and_version_do_not_import_kubernetes() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    lines = done.stdout.splitlines()
    assert lines[0] == f"nvcregen, version {__version__}"
    assert "--server CONTEXT" in done.stdout
    assert lines[-1] == "[]"


VERSION_PROBE = """
import sys
import nvcregen.cli
try:
    nvcregen.cli.main(["--version"])
except SystemExit:
    pass
print(sorted({m.split(".")[0] for m in sys.modules}))
"""
# What `--version` must not pay for: the cluster client, Helm (helm-python-sdk's module),
# and the validation stack every compile needs.
HEAVY = {"kubernetes", "urllib3", "helm_python", "jsonschema", "pydantic", "ruamel", "yaml"}


@pytest.mark.slow
def test_version_imports_neither_kubernetes_nor_helm_nor_the_compiler() -> None:
    done = subprocess.run(
        [sys.executable, "-c", VERSION_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == f"nvcregen, version {__version__}"
    loaded = set(ast.literal_eval(lines[-1]))
    assert "click" in loaded  # the probe saw the modules of a real run
    assert loaded & HEAVY == set()
