"""The offline tool never loads the optional kubernetes client, so it needs no `cluster` extra."""

from __future__ import annotations

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
