"""The plan ConfigMap lists every run, and counts them once the list would be too long.

Kubernetes refuses a ConfigMap whose data passes 1 MiB, and client-side apply copies the
object into a 256 KiB annotation: the run-by-run list of a 1,024-node site is 1.1 MB
(issue #22). Past `PLAN_LIST_LIMIT` bytes each step counts its runs by kind and test.
"""

from __future__ import annotations

import re

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Built, Options, build_site
from nvcregen.compile.gitops import steps
from nvcregen.core.manifest import Manifest
from tools.fleetsite import fleet_site

NODES = 8


def _built() -> list[Manifest]:
    built = build_site(
        fleet_site(NODES, packing="perRun").encode(), "sites/fleet.yaml", load_catalog(), Options()
    )
    assert isinstance(built, Built)
    return built.manifests


def _plan(manifests: list[Manifest]) -> str:
    (found,) = [m for m in manifests if m.name == "h20-3e-trainer-readiness-plan"]
    return str(found.obj["data"]["steps"])


def _runs(manifests: list[Manifest]) -> list[Manifest]:
    return [m for m in manifests if steps.is_run(m) and m.folder != steps.COMMON_FOLDER]


def test_the_list_at_the_limit_is_kept_and_one_byte_over_is_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listed = _plan(_built())
    runs = _runs(_built())
    assert all(f"  {m.kind}/{m.name}\n" in listed for m in runs)
    monkeypatch.setattr(steps, "PLAN_LIST_LIMIT", len(listed.encode()))
    assert _plan(_built()) == listed
    monkeypatch.setattr(steps, "PLAN_LIST_LIMIT", len(listed.encode()) - 1)
    counted = _plan(_built())
    assert not any(m.name in counted for m in runs)
    assert len(counted) < len(listed) / 4
    headers = re.findall(r"^\S+: step \d+, \d+ runs, timeout \S+$", listed, flags=re.M)
    assert re.findall(r"^\S+: step \d+, \d+ runs, timeout \S+$", counted, flags=re.M) == headers
    assert counted.endswith(
        f"listing each passes {(len(listed) - 1) // 1024} KiB; "
        "each step's folder holds them, and `nvcregen plan` lists them\n"
    )


def test_counted_runs_add_up_to_each_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps, "PLAN_LIST_LIMIT", 0)
    manifests = _built()
    counted = _plan(manifests)
    runs = _runs(manifests)
    for block in re.split(r"^(?=\S+: step )", counted, flags=re.M)[1:]:
        header, *rows = block.strip().splitlines()
        folder, total = re.match(r"^(\S+): step \d+, (\d+) runs", header).groups()  # type: ignore[union-attr]
        mine = [m for m in runs if m.folder == folder]
        assert int(total) == len(mine)
        found = {}
        for row in rows:
            if row.startswith("  "):
                count, kind, test = re.match(r"^  (\d+) x (\S+) (\S+)$", row).groups()  # type: ignore[union-attr]
                found[(kind, test)] = int(count)
        expected: dict[tuple[str, str], int] = {}
        for m in mine:
            key = (m.kind, m.obj["metadata"]["labels"]["nvcregen.io/test"])
            expected[key] = expected.get(key, 0) + 1
        assert found == expected
    # one Job per node per DCGM level and round; one TrainJob per pair per inter-node test
    assert f"  {NODES} x Job dcgm-l1\n" in counted
    assert f"  {NODES // 2} x TrainJob nccl-all-reduce\n" in counted
