"""Node-health pod logs as the `node-health` test prints them, from the 8-GPU fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "node-health"
XML = (ROOT / "tests" / "fixtures" / "node" / "h200-8gpu" / "nvidia-smi-q.xml").read_text()


def health_log(node: str, xml: str = XML, kernel: str = "", *, end: bool = True) -> str:
    """One node's log: its begin marker, the XML and kernel sections, and (unless cut) end."""
    text = f"@@nvcregen-node-health begin node={node}\n@@nvcregen-node-health section=xml\n"
    text += xml + "@@nvcregen-node-health section=kernel\n" + kernel
    return text + ("@@nvcregen-node-health end rc=0\n" if end else "")


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The node-health examples rendered once for the session, by mode: their trees.

    A fixture, registered for every test by `pytest_plugins` in tests/conftest.py.
    """
    out = tmp_path_factory.mktemp("out")
    trees = {}
    for mode in ("trainer", "nvcre"):
        args = ["render", "--out", str(out / mode), str(EXAMPLES / f"h200-{mode}.yaml")]
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        trees[mode] = out / mode / f"node-health-{mode}"
    return trees
