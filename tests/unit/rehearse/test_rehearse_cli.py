"""`nvcregen rehearse` on bad input and without the twin: exit 2, one clear line, nothing left."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.rehearse import locate

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_twin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty build cache, and a temporary folder of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(ROOT)
    return tmp_path


def rehearse(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["rehearse", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def test_without_the_control_plane_it_names_the_build_to_run(no_twin: Path) -> None:
    code, out, err = rehearse("sites/h20-3e-trainer.yaml")
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("nvcregen: the control plane is not built (no etcd, kube-apiserver")
    assert line.endswith("run `make controlplane twin`)")
    assert list((no_twin / "tmp").iterdir()) == []  # the scratch folder is gone


def test_without_the_twin_it_says_make_twin(no_twin: Path) -> None:
    planes = locate.control_plane_dir()
    planes.mkdir(parents=True)
    for name in locate.CONTROL_PLANE_BINARIES:
        (planes / name).write_text("#!/bin/sh\n", "utf-8")
        (planes / name).chmod(0o755)
    code, _, err = rehearse("sites/h20-3e-trainer.yaml")
    assert code == 2
    (line,) = err.splitlines()
    assert line == (
        f"nvcregen: the twin is not built (no {', '.join(locate.TWIN_BINARIES)} in "
        f"{locate.twin_dir() / 'bin'}; run `make twin`)"
    )


def test_a_site_with_errors_is_reported_at_its_line(no_twin: Path) -> None:
    site = no_twin / "bad.yaml"
    site.write_text("apiVersion: nvcregen.io/v1alpha1\nkind: Site\nmetadata: {name: x}\n", "utf-8")
    code, _, err = rehearse(str(site))
    assert code == 2
    assert "bad.yaml:1:1: error[NVC201]: missing required key 'spec'" in err
    assert "nothing rehearsed" in err
    assert list((no_twin / "tmp").iterdir()) == []


def test_an_nvcre_site_is_refused(no_twin: Path) -> None:
    code, _, err = rehearse("sites/h20-3e-lab.yaml")
    assert code == 2
    (line,) = err.splitlines()
    assert "rehearse runs trainer-mode sites" in line and "engine is nvcre" in line


def test_keep_keeps_the_rendered_tree_and_refuses_a_folder_in_use(no_twin: Path) -> None:
    kept = no_twin / "kept"
    code, _, _ = rehearse("sites/h20-3e-trainer.yaml", "--keep", str(kept))
    assert code == 2  # no twin here
    assert (kept / "tree" / "h20-3e-trainer" / "queues").is_dir()
    code, _, err = rehearse("sites/h20-3e-trainer.yaml", "--keep", str(kept))
    assert code == 2
    assert err == f"nvcregen: --keep {kept}: not an empty folder\n"


@pytest.mark.parametrize("option", [["--speed", "0.5"], ["--timeout", "0"], ["--format", "yaml"]])
def test_bad_options_exit_2(no_twin: Path, option: list[str]) -> None:
    code, _, _ = rehearse("sites/h20-3e-trainer.yaml", *option)
    assert code == 2


def test_fail_names_a_node_of_the_site(no_twin: Path) -> None:
    """Checked once the site is rendered, before the twin is looked for."""
    code, out, err = rehearse("sites/h20-3e-trainer.yaml", "--fail", "node-z")
    assert (code, out) == (2, "")
    assert err == "nvcregen: --fail node-z: not a node of the site (its nodes: node-a, node-b)\n"
    assert list((no_twin / "tmp").iterdir()) == []


def test_fail_names_a_link_only_where_the_site_has_an_inventory(no_twin: Path) -> None:
    code, _, err = rehearse("sites/h20-3e-trainer.yaml", "--fail", "leaf-1,leaf-2")
    assert code == 2
    assert err == (
        "nvcregen: --fail leaf-1,leaf-2: a link between two leaves needs the site's inventory"
        " (spec.inventory), which places nodes in leaves; this site has none\n"
    )
