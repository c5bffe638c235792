"""What an nvbandwidth verdict may rest on (found by review; nvcregen.kinds.nvbandwidth.judge,
kinds/nvbandwidth/files.model_bounds, logs.py).

- A testcase asked for that shows no figure in GB/s (every cell N/A, no matrix) fails the
  run: it passed before, having judged nothing.
- A run on another number of GPUs than its node's fails: it measured other links.
- A model whose PCIe generation the catalog does not state has no host ceiling: a guessed
  gen 4 called an H200's honest 55 GB/s impossible and failed the node.
- A model without a floor in the catalog is not judged (no-data): every node was cleared.
- `kubectl --timestamps` prefixes do not hide the text form from the form check.
"""

from __future__ import annotations

from pathlib import Path

from nvcregen.kinds.nvbandwidth.files import model_bounds
from nvcregen.kinds.nvbandwidth.judge import judge
from nvcregen.kinds.nvbandwidth.reader import parse_nvbandwidth

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures" / "nvbandwidth"
ASKED = ("host_to_device_memcpy_ce", "device_to_host_memcpy_ce")
TEXT = (CAPTURES / "v0.8-h100-sxm.txt").read_text()


def verdict_of(text: str, model: str = "H100", gpus: int | None = 1) -> list[str]:
    bounds = model_bounds(model)
    assert bounds is not None and bounds.floor is not None
    run = parse_nvbandwidth(text, "x.log")
    return list(judge(run, bounds.floor, bounds.ceilings, ASKED, gpus).problems)


def test_the_capture_passes_as_it_is() -> None:
    assert verdict_of(TEXT) == []


def test_a_testcase_without_a_figure_fails() -> None:
    blank = TEXT.replace(" 0     55.30", " 0       N/A")
    assert verdict_of(blank) == ["host_to_device_memcpy_ce: no figure in GB/s to judge"]


def test_a_run_on_another_number_of_gpus_than_its_node_fails() -> None:
    assert verdict_of(TEXT, gpus=8) == ["1 GPU(s) measured: the node has 8"]
    assert verdict_of(TEXT, gpus=1) == []
    assert verdict_of(TEXT, gpus=None) == []  # `ingest` alone: the node is not known


def test_a_model_without_a_stated_pcie_generation_has_no_host_ceiling() -> None:
    h100, h200 = model_bounds("H100"), model_bounds("H200")
    assert h100 is not None and h100.ceilings.host is not None  # gen 5 stated
    assert h200 is not None and h200.ceilings.host is None  # the catalog states none
    assert "does not state" in h200.ceilings.host_link
    assert h100.floor is not None
    run = parse_nvbandwidth(TEXT, "x.log")  # 55 GB/s: above a gen-4 guess (31.5 GB/s)
    found = judge(run, h100.floor, h200.ceilings, ASKED, 1)
    assert found.passed and not [c for c in found.cells if c.outcome == "impossible"]


def test_a_model_without_a_floor_is_not_judged() -> None:
    h200 = model_bounds("H200")
    assert h200 is not None and h200.floor is None  # collect records no-data: not cleared


def test_a_prefixed_log_is_read_as_text() -> None:
    stamped = "".join(f"2026-12-06T09:19:12.000000000Z {line}\n" for line in TEXT.splitlines())
    assert parse_nvbandwidth(stamped, "x.log").version == parse_nvbandwidth(TEXT, "x").version
