"""GitOps units against what their engines hold (NVC677, issue #33): exact at each limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from replayfactory import SHIPPED, shipped, shipped_facts

from nvcregen.catalog.engines import EngineFacts, engine_facts
from nvcregen.cli import main
from nvcregen.replay.model import TreeObject
from nvcregen.replay.site import replay_site
from nvcregen.replay.units import gitops_units, unit_problems
from nvcregen.spec.fast import parse_fast
from tools.fleetsite import write_fleet_site

ROOT = "out/s"


def app(path: str, *, recurse: bool = True) -> TreeObject:
    obj = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "s-readiness", "namespace": "argocd"},
        "spec": {"source": {"path": f"{ROOT}/{path}", "directory": {"recurse": recurse}}},
    }
    return TreeObject("gitops/app.yaml", "gitops/app.yaml", obj)


def kustomization(path: str) -> TreeObject:
    obj = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "s-readiness", "namespace": "flux-system"},
        "spec": {"path": f"./{ROOT}/{path}", "sourceRef": {"kind": "GitRepository"}},
    }
    return TreeObject("gitops/ks.yaml", "gitops/ks.yaml", obj)


def config_maps(count: int, folder: str = "readiness/01-a", data: str = "") -> list[TreeObject]:
    return [
        TreeObject(
            f"{folder}/cm-{i}.yaml",
            f"{folder}/cm-{i}.yaml",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": "nvcre"},
                "data": {"d": data},
            },
        )
        for i in range(count)
    ]


def problems(objects: list[TreeObject], facts: EngineFacts | None = None) -> list[Any]:
    facts = facts or engine_facts()
    return unit_problems(gitops_units(objects, ROOT, facts), facts)


@pytest.mark.parametrize("owner", [app("readiness"), kustomization("readiness")])
def test_a_unit_of_the_limits_objects_is_held_and_one_more_is_refused(owner: TreeObject) -> None:
    limit = engine_facts().unit.max_objects
    assert limit == 1000
    assert problems([owner, *config_maps(limit)]) == []
    (found,) = problems([owner, *config_maps(limit + 1)])
    assert (found.code, found.file) == ("NVC677", owner.file)
    assert "applies 1,001 objects" in found.message and "over 1,000 objects" in found.message
    assert found.notes == ("most of it is in readiness/01-a/ (1001 objects)",)


def test_an_application_without_recurse_holds_only_its_folder() -> None:
    limit = engine_facts().unit.max_objects
    deeper = config_maps(limit + 1, "readiness/01-a/round-1")
    assert problems([app("readiness/01-a", recurse=False), *deeper]) == []
    assert problems([app("readiness/01-a"), *deeper])


def test_manifests_over_the_limit_are_refused_at_the_byte() -> None:
    facts = engine_facts()
    owner = app("readiness")
    one = config_maps(1)
    empty = len(json.dumps(one[0].obj, separators=(",", ":")))
    small = facts.unit.model_copy(update={"max_manifests": f"{empty * 4}B"})
    tight = facts.model_copy(update={"unit": small})
    assert problems([owner, *config_maps(4)], tight) == []
    (found,) = problems([owner, *config_maps(5)], tight)
    assert f"over {empty * 4}B manifests" in found.message


def test_a_status_over_the_limit_is_refused() -> None:
    facts = engine_facts()
    per = facts.argocd_status_per_resource
    small = facts.unit.model_copy(update={"max_status": f"{per * 3}B"})
    tight = facts.model_copy(update={"unit": small})
    assert problems([app("readiness"), *config_maps(3)], tight) == []
    (found,) = problems([app("readiness"), *config_maps(4)], tight)
    assert f"a {per * 3}B status" in found.message


@pytest.mark.parametrize("site", SHIPPED)
def test_every_shipped_unit_is_within_its_engines_limits(site: str) -> None:
    facts = engine_facts()
    units = gitops_units(shipped(site), shipped_facts(site).root, facts)
    assert units  # each shipped site has its GitOps objects
    assert unit_problems(units, facts) == []
    assert "NVC677" not in [
        p.code for p in replay_site(shipped(site), shipped_facts(site)).problems
    ]


@pytest.mark.slow
def test_render_shards_a_per_run_trainer_fleet_into_units_its_engine_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 64 nodes in trainer mode, a run per node, test and round: 2,697 readiness objects,
    # refused in one Application before issue #33's shards; now a parent of 8 children
    monkeypatch.chdir(tmp_path)
    write_fleet_site(tmp_path, 64, packing="perRun")
    result = CliRunner().invoke(main, ["render"])
    assert result.exit_code == 0, result.output
    site = tmp_path / "out" / "h20-3e-trainer"
    children = sorted(p.name for p in (site / "readiness").glob("application-*.yaml"))
    assert len(children) == 8  # 00-common, six rounds, the final gate
    tree = [
        TreeObject(str(p), p.relative_to(site).as_posix(), yaml_object(p))
        for p in sorted(site.rglob("*.yaml"))
    ]
    units = gitops_units(tree, "out/h20-3e-trainer", engine_facts())
    # <site>-gitops, platform, queues, the readiness parent and its 8 children
    assert max(u.objects for u in units) <= 1000 and len(units) == 3 + 1 + 8
    assert unit_problems(units, engine_facts()) == []
    checked = CliRunner().invoke(main, ["check", "out"])
    assert checked.exit_code == 0, checked.output


@pytest.mark.slow
def test_render_refuses_a_tree_over_a_unit_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a unit of one object: no run and its prebuilt Workload fit, whatever the shards
    facts = engine_facts()
    tight = facts.model_copy(update={"unit": facts.unit.model_copy(update={"max_objects": 1})})
    for module in ("nvcregen.chain.pipeline", "nvcregen.replay.site"):
        monkeypatch.setattr(f"{module}.engine_facts", lambda: tight)
    monkeypatch.chdir(tmp_path)
    write_fleet_site(tmp_path, 2, packing="perRun")
    result = CliRunner().invoke(main, ["render"])
    assert result.exit_code == 2, result.output  # bad input: nothing written
    assert "error[NVC677]" in result.output
    assert "= at /spec/readiness/stages/0" in result.output
    assert not (tmp_path / "out").exists()


def yaml_object(path: Path) -> dict[str, Any]:
    found = parse_fast(path.read_bytes())
    assert isinstance(found, dict)
    return found
