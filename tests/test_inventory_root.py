"""`spec.inventory` is found from the site's project, not from the current folder (issue #32).

The site's project is the folder render compiles the site in (`chain/sites.py` site_root):
the nearest folder above the site file that holds `sites/`, else the current folder when
the file is in it, else the file's own folder. `validate`, `plan`, `drill` and `collect`
(tests/unit/collect/test_collect_saved_node_drift.py) all read the inventory from there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fabricfactory import INVENTORY, fleet_inventory, fleet_site

from nvcregen.cli import main
from nvcregen.emit.canonical import dump_yaml
from nvcregen.fabric.inventory import Inventory, to_data

COUNT, LEAVES = 8, 2


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def write_inventory(folder: Path, inventory: Inventory) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / INVENTORY).write_text(dump_yaml(to_data(inventory)))


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder: outside the project, holding an inventory of other nodes."""
    here = tmp_path / "elsewhere"
    write_inventory(here, Inventory("decoy", {}))  # used, it would miss every node: NVC391
    monkeypatch.chdir(here)
    return tmp_path


COMMANDS = [
    ("validate",),
    ("plan",),
    ("drill", "--fail", "gpu-0003"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_site_of_a_project_reads_the_projects_inventory_from_any_folder(
    elsewhere: Path, command: tuple[str, ...]
) -> None:
    project = elsewhere / "project"
    write_inventory(project, fleet_inventory(COUNT, LEAVES))
    (project / "sites").mkdir()
    site = project / "sites" / "fleet.yaml"
    site.write_text(fleet_site(COUNT))
    result = run(command[0], site, *command[1:])
    assert result.exit_code == 0, result.output
    assert "NVC39" not in result.output


def test_a_site_outside_any_project_reads_the_inventory_beside_it(elsewhere: Path) -> None:
    folder = elsewhere / "loose"
    write_inventory(folder, fleet_inventory(COUNT, LEAVES))
    (folder / "fleet.yaml").write_text(fleet_site(COUNT))
    result = run("validate", folder / "fleet.yaml")
    assert result.exit_code == 0, result.output


def test_a_site_inside_the_current_folder_reads_the_current_folders(elsewhere: Path) -> None:
    """No `sites/` above it: the current folder is its project, and its decoy is read."""
    (elsewhere / "elsewhere" / "fleet.yaml").write_text(fleet_site(COUNT))
    result = run("validate", "fleet.yaml")
    assert result.exit_code == 2
    assert "error[NVC391]: node gpu-0000 is not in the inventory" in result.output
