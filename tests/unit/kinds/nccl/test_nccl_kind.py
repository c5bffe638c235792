"""The nccl kind's package holds its rehearsal maker, nccl-tests printer and `ingest nccl`."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.ingest.kindingest import ingest_names, ingest_of
from nvcregen.kinds.nccl import maker
from nvcregen.kinds.nccl.ingest import INGEST
from nvcregen.rehearse.makers.registry import maker_of

REAL = Path(__file__).resolve().parents[3] / "fixtures" / "real-logs"


def a_log() -> Path:
    found = sorted(p for p in REAL.rglob("*.txt") if "all_reduce" in p.name or "nccl" in p.name)
    assert found, "the nccl-tests captures"
    return found[0]


def test_the_layers_find_its_maker_and_its_ingest_in_its_package() -> None:
    assert maker_of("nccl") is maker.MAKER
    assert ingest_of("nccl") is INGEST and INGEST.options == frozenset({"at"})
    assert next(iter(ingest_names())) == "nccl"  # the registry's order: `ingest`'s first


def test_ingest_nccl_takes_at_and_names_the_kind_that_takes_what_it_refuses() -> None:
    runner = CliRunner()
    site = runner.invoke(main, ["ingest", "nccl", str(a_log()), "--site", "s.yaml", "--pool", "p"])
    assert site.exit_code == 2
    assert "are not for it: --site and --pool are for `ingest node`" in site.output
    model = runner.invoke(main, ["ingest", "nccl", str(a_log()), "--model", "H100"])
    assert model.exit_code == 2
    assert "--model is not for `ingest nccl`" in model.output
    bad = runner.invoke(main, ["ingest", "nccl", str(a_log()), "--at", "1G"])
    assert bad.exit_code == 2 and "--at" in bad.output and "unknown size unit 'G'" in bad.output


def test_a_refusal_names_no_taker_for_an_option_not_given() -> None:
    order = CliRunner().invoke(main, ["ingest", "node", str(a_log()), "--at", "1GiB"])
    assert order.exit_code == 2
    assert order.output.rstrip().endswith(
        "--order and --at are not for it: --at is for `ingest nccl`"
    )
