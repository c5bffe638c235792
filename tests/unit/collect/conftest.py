"""Fixtures shared by the collect tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from nodehealthlogs import EXAMPLES

from nvcregen.cli import main


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The node-health examples rendered once for the session, by mode: their trees."""
    out = tmp_path_factory.mktemp("out")
    trees = {}
    for mode in ("trainer", "nvcre"):
        args = ["render", "--out", str(out / mode), str(EXAMPLES / f"h200-{mode}.yaml")]
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        trees[mode] = out / mode / f"node-health-{mode}"
    return trees
