"""`nvcregen catalog list|show`: every entry listed, one entry shown, as text and JSON."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner, Result

from nvcregen.catalog.browse import KINDS, NotInCatalogError, find
from nvcregen.catalog.load import load_catalog
from nvcregen.cli import main

CATALOG = load_catalog()


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def first_column(block: str) -> list[str]:
    return [line.split()[0] for line in block.strip().splitlines()[2:]]


def test_list_names_every_entry_of_every_kind() -> None:
    result = run("catalog", "list")
    assert result.exit_code == 0
    blocks = dict(b.split(":\n", 1) for b in result.stdout.split("\n\n"))
    assert list(blocks) == list(KINDS)
    assert first_column("x\n" + blocks["hardware"]) == sorted(CATALOG.hardware)
    assert first_column("x\n" + blocks["tests"]) == sorted(CATALOG.tests)
    assert first_column("x\n" + blocks["baselines"]) == sorted(CATALOG.baselines)
    h20 = next(line for line in blocks["hardware"].splitlines() if line.startswith("h20-3e "))
    assert h20.split() == [
        "h20-3e",
        "H20-3e",
        "8",
        "141",
        "GB",
        "SXM",
        "NV18",
        "8",
        "x",
        "200Gb/s",
        "roce",
        "unknown",
    ]
    roce = next(line for line in blocks["baselines"].splitlines() if "2node-roce" in line)
    assert roce.endswith("427.58 GB/s")  # the median of 363.76, 427.58, 452.28


@pytest.mark.parametrize("kind", KINDS)
def test_list_one_kind_as_json(kind: str) -> None:
    result = run("catalog", "list", "--kind", kind, "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert list(data) == [kind]
    names = [e["name"] for e in data[kind]]
    assert names == sorted(getattr(CATALOG, kind))
    assert all(e["file"].startswith(f"catalog/{kind}/") for e in data[kind])


def test_show_a_model_by_its_written_name() -> None:
    result = run("catalog", "show", "RTX PRO 6000")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "hardware rtx-pro-6000 (catalog/hardware/rtx-pro-6000.yaml)"
    assert "  model: RTX PRO 6000" in lines
    assert "  gpusPerNode: 8" in lines
    assert lines[-1] == "start a site: nvcregen init --model rtx-pro-6000 --name SITE"


def test_show_a_test_as_json_keeps_its_own_kind() -> None:
    result = run("catalog", "show", "nccl-all-reduce", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert (data["kind"], data["name"], data["file"]) == (
        "tests",
        "nccl-all-reduce",
        "catalog/tests/nccl-all-reduce.yaml",
    )
    assert data["entry"]["kind"] == "nccl"
    assert data["entry"]["nvcre"]["variant"] == "nccl-all-reduce"
    assert data["entry"]["scopes"] == ["intra-node", "inter-node"]


def test_show_a_baseline_lists_its_rounds() -> None:
    result = run("catalog", "show", "h20-3e-2node-roce-all-reduce")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].startswith("baseline h20-3e-2node-roce-all-reduce ")
    assert "    - {busbw: 363.76}" in result.stdout


def test_show_unknown_name_suggests_and_exits_2() -> None:
    result = run("catalog", "show", "nccl-allreduce")
    assert result.exit_code == 2
    assert "'nccl-allreduce' is not in the catalog; did you mean nccl-all-reduce" in result.output


def test_show_with_the_wrong_kind_is_not_found() -> None:
    result = run("catalog", "show", "h20-3e", "--kind", "tests")
    assert result.exit_code == 2
    assert "is not in catalog tests" in result.output


def test_find_reports_a_name_shared_by_two_kinds() -> None:
    baseline = next(iter(CATALOG.baselines.values()))
    catalog = replace(
        CATALOG,
        baselines={**CATALOG.baselines, "h20-3e": baseline},
        origins={**CATALOG.origins, "baselines/h20-3e": "baselines/h20-3e.yaml"},
    )
    with pytest.raises(NotInCatalogError, match="--kind hardware or --kind baselines"):
        find(catalog, "H20-3e")
    assert find(catalog, "H20-3e", "hardware").kind == "hardware"
