"""The offline tool never loads the optional kubernetes client, so it needs no `cluster` extra."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


NOOP_PROBE = """
import sys
import nvcregen.cli
try:
    nvcregen.cli.main(["render", "--check"])
except SystemExit as exc:
    print("exit", exc.code)
print(sorted({m.split(".")[0] for m in sys.modules}))
"""


@pytest.mark.slow
def test_a_no_op_render_check_loads_no_yaml_dumper_and_no_process_pool(tmp_path: Path) -> None:
    """Issue #10's no-op: `render --check` of an up-to-date tree is mostly reading files."""
    root = Path(__file__).resolve().parents[3]
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "h20-3e-lab.yaml").write_bytes(
        (root / "sites" / "h20-3e-lab.yaml").read_bytes()
    )
    run = [sys.executable, "-m", "nvcregen", "render"]
    subprocess.run(run, cwd=tmp_path, capture_output=True, check=True, timeout=120)
    done = subprocess.run(
        [sys.executable, "-c", NOOP_PROBE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "exit 0", done.stdout + done.stderr
    loaded = set(ast.literal_eval(lines[-1]))
    assert "click" in loaded
    assert loaded & {"ruamel", "multiprocessing", "concurrent"} == set()
