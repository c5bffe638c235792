"""`nvcregen ingest link-counters`: 0 read, 1 a counter or port that is no evidence, 2 refused."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result
from linkctrlogs import CAPTURES, ctr_lines, gpud_counters, grown, link_log

from nvcregen.cli import main
from nvcregen.kinds.linkcounters.reader import MAX_PORTS

PERFTEST = CAPTURES.parent / "perftest" / "write-bw-gbits-h200-cuda-dmabuf.txt"


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, ["ingest", "link-counters", *map(str, args)])
    assert "Traceback" not in result.output
    return result


def write(tmp_path: Path, name: str, before: dict[str, str], after: dict[str, str]) -> Path:
    path = tmp_path / name
    port = ("mlx5_1", 1)
    path.write_text(
        link_log(
            {port: ctr_lines(*port, "counters", before)},
            {port: ctr_lines(*port, "counters", after)},
        )
    )
    return path


def test_a_clean_log_exits_0_with_each_ports_growth(tmp_path: Path) -> None:
    values = gpud_counters() | {"link_downed": "0", "port_xmit_discards": "0"}
    values |= {"port_xmit_wait": "0", "excessive_buffer_overrun_errors": "0"}
    log = write(tmp_path, "ok.log", values, grown(values, symbol_error=2))
    result = run(log)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"{log}: 1 port(s) over 3600 s\n"
        "  mlx5_1 port 1 (InfiniBand): counters/symbol_error +2 (2.0/h)\n"
    )
    doc = json.loads(run(log, "--format", "json").stdout)
    (port,) = doc["runs"][0]["ports"]
    symbol = next(c for c in port["counters"] if c["name"] == "symbol_error")
    assert symbol == {
        "group": "counters",
        "name": "symbol_error",
        "before": 0,
        "after": 2,
        "delta": 2,
        "perHour": 2.0,
    }


def test_saturated_counters_exit_1_and_name_them(tmp_path: Path) -> None:
    values = gpud_counters()  # link_downed 255, ...: stopped counting
    result = run(write(tmp_path, "sat.log", values, values))
    assert result.exit_code == 1
    assert "NVC760: mlx5_1 port 1: counters/link_downed stands at 255" in result.stdout


def test_other_text_and_a_broken_bound_exit_2(tmp_path: Path) -> None:
    result = run(PERFTEST)
    assert result.exit_code == 2
    assert "NVC700" in result.output and "not link counter output" in result.output
    many = {(f"mlx5_{i}", 1): "" for i in range(MAX_PORTS + 1)}
    over = tmp_path / "over.log"
    over.write_text(link_log(many, many))
    result = run(over)
    assert result.exit_code == 2 and "NVC763" in result.output
