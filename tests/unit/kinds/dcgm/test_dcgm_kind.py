"""The dcgm kind is one package (issue 35 item 2): its log reader, maker and script in it."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from sitefactory import catalog

from nvcregen.kindapi.protocol import NodeRun
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.kinds.dcgm import logs, maker
from nvcregen.kinds.dcgm.kind import MARK
from nvcregen.kinds.dcgm.logs import read_dcgm
from nvcregen.rehearse.makers.registry import maker_of
from nvcregen.results.kindlogs import log_reader_of
from nvcregen.results.nodebind import FOREIGN

DCGM = Path(__file__).resolve().parents[3] / "fixtures" / "real-logs" / "dcgm"
PASSED = (DCGM / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt").read_text()
FAILED = (DCGM / "dcgm-3.3.8-diag-r3-text-8xH100-gpu-memory-fail-cuinit.txt").read_text()
BEGIN = f"{MARK} begin node=gpu-07 pod=d-r1-n7-x7k2p start=2026-12-06T07:00:00Z"
BASE: dict[str, Any] = {"path": "logs/nvcre/d-r1-n7.log", "sha256": "x", "stage": "s",
                        "test": "dcgm-l1", "run": "d-r1-n7", "round": 1, "group": "n7",
                        "nodes": ("gpu-07",)}  # fmt: skip


def test_the_layers_find_its_log_reader_and_maker_in_its_package() -> None:
    assert log_reader_of("dcgm") is logs.READER
    assert maker_of("dcgm") is maker.MAKER


def test_its_script_is_a_template_of_its_package() -> None:
    test = catalog().tests["dcgm-l1"]
    run = NodeRun(gpus=8, timeout_ms=600_000, outer_deadline_s=540, hostengine=None)
    script = kind_of(test).node_script(test, run)
    assert script is not None and script.package == "nvcregen.kinds.dcgm"
    template = files(script.package).joinpath("templates", script.template).read_text()
    assert f"{MARK} begin node=" in template


def test_a_log_of_its_node_is_read_into_status_tests_and_version() -> None:
    passed = read_dcgm(f"{BEGIN}\n{PASSED}", BASE, names_itself=True)
    assert (passed.kind, passed.status, passed.hosts) == ("dcgm", "ok", ("gpu-07",))
    assert (passed.errors, passed.versions) == ((), ("3.1.0",))
    failed = read_dcgm(f"{BEGIN}\n{FAILED}", BASE, names_itself=True)
    assert (failed.status, failed.errors, failed.versions) == (
        "failed",
        ("GPU Memory: Fail",),
        ("3.3.8",),
    )


def test_another_nodes_log_is_foreign_and_none_of_it_is_read() -> None:
    found = read_dcgm(f"{BEGIN.replace('gpu-07', 'gpu-08')}\n{FAILED}", BASE, offset=4)
    assert found.status == FOREIGN and found.versions == ()
    assert found.errors[0].startswith("NVC730: logs/nvcre/d-r1-n7.log:5: the log is from node")


@pytest.mark.parametrize("names_itself", [False, True])
def test_an_older_or_stripped_log(names_itself: bool) -> None:
    found = read_dcgm(PASSED, BASE, names_itself=names_itself)
    # an older render's Job prints no line: read, bound by its name (NVC739's note)
    assert found.status == (FOREIGN if names_itself else "ok")
    assert found.hosts == ()


def test_output_that_is_not_dcgm_is_no_data() -> None:
    found = read_dcgm(f"{BEGIN}\nnothing\n", BASE)
    assert (found.status, found.hosts) == ("no-data", ("gpu-07",))
    assert found.errors == ("not dcgmi diag output: no diagnostic JSON and no result table",)


def test_only_dcgm_reads_a_log_without_its_begin_line_as_an_older_renders() -> None:
    older = {name for name, kind in KINDS.items() if kind.unmarked_before is not None}
    assert older == {"dcgm"}
    assert KINDS["dcgm"].unmarked_before == MARK == "@@nvcregen-dcgm"


def test_ingest_dcgm_is_its_packages_and_takes_none_of_the_other_kinds_options() -> None:
    from click.testing import CliRunner

    from nvcregen.cli import main
    from nvcregen.ingest.kindingest import ingest_of
    from nvcregen.kinds.dcgm.ingest import INGEST

    assert ingest_of("dcgm") is INGEST and INGEST.options == frozenset()
    log = str(DCGM / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt")
    read = CliRunner().invoke(main, ["ingest", "dcgm", log])
    assert read.exit_code == 0 and "3.1.0" in read.output
    for option in (["--at", "1GiB"], ["--model", "H100"], ["--site", "s.yaml", "--pool", "p"]):
        refused = CliRunner().invoke(main, ["ingest", "dcgm", log, *option])
        assert refused.exit_code == 2, option
        assert "not for it" in refused.output or "not for `ingest dcgm`" in refused.output
