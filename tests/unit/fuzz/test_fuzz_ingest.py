"""Fuzz the raw log readers: nccl-tests and DCGM outputs never raise but a refusal.

Issue #20: fuzzing found 80 crashes at three places of the DCGM readers (huge integers
in GPU ids, in JSON and in text tables; a `json` decode error escaping its handler) and
three in the NCCL reader (a huge out-of-bounds count, a huge node count, a summary of
`inf` or `nan`). Each is pinned by a test below, then the readers are fuzzed with
hypothesis: any exception but `IngestFormatError` is an internal error (exit 70).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzzing import BUDGET, HUGE, hostile_token, lines_of, mutated, real_logs
from hypothesis import given
from hypothesis import strategies as st

from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.ingest.limits import MAX_DIGITS, InputLimitError, bounded_int
from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nccl.files import ingest_nccl
from nvcregen.kinds.nccl.reader import parse_nccl

HEADER = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong"
ROW = "     8       2   float  sum  -1   10.0  0.00  0.00  0   10.0  0.00  0.00  0"
NCCL_FRAGMENTS = (
    HEADER,
    ROW,
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20",
    "# Collective test starting: all_reduce_perf",
    "#  Rank  0 Group  0 Pid   1 on node-a device  0 [0x1b] NVIDIA H200",
    "# Out of bounds values : ",
    " OK",
    "# Avg bus bandwidth    : ",
    "node-a:1:2 [0] NCCL INFO ",
    "Using network IB",
    "comm 0x1 rank 0 nRanks 2 nNodes ",
    "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
    "NET/IB : Using [0]mlx5_0:1/RoCE",
    "Failed to initialize NET plugin IB",
    "NCCL WARN ",
    "NCCL version 2.21.5+cuda12.4",
    "Test NCCL failure common.cu:1 ",
    "[1,0]<stdout>:",
    "2026-10-14T13:01:00.123456789Z ",
    "mpirun noticed that process rank 1 with PID 2 on node a exited on signal 9 (Killed).",
    "srun: error: node-b: task 1: Segmentation fault",
    "=== all_gather_perf ===",
    " ",
    "\t",
)
DCGM_FRAGMENTS = (
    '{"DCGM Diagnostic": {',
    '{"DCGM GPU Diagnostic": {"version": "3.3.5", ',
    '"test_categories": [{"category": "Hardware", "tests": [{"name": "pcie", ',
    '"results": [{"gpu_ids": "',
    '"entity_id": ',
    '"gpu_id": ',
    '"status": "Pass"}',
    '"test_summary": {"status": "Fail"}',
    '"warnings": [{"warning": "x"}]',
    '"metadata": {"version": "4.2.3"}',
    '"runtime_error": "x"',
    "]}]}}",
    "null, ",
    "+---------------------------+------------------------------------------------+",
    "| Diagnostic                | Result                                         |",
    "|-----  Metadata  ----------+------------------------------------------------|",
    "| DCGM Version              | 4.2.3                                          |",
    "| pcie                      | Fail - GPU: ",
    "|                           | GPU",
    ": Pass |",
    "| Warning                   | There was an internal error during the test:   |",
    "Error: Unable to complete diagnostic for entities 0. Return: (-30) : DCGM",
    "dcgmi diag -r 3",
)


def inf_summary(value: str) -> str:
    return f"{HEADER}\n{ROW}\n# Out of bounds values : 0 OK\n# Avg bus bandwidth : {value}\n"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (inf_summary("inf"), "NVC715"),
        (inf_summary("nan"), "NVC715"),
        (f"{HEADER}\n{ROW.replace('0.00  0 ', 'inf  0 ', 1)}\n# Avg bus bandwidth : 0\n", "NVC715"),
        (f"{HEADER}\n# Out of bounds values : {HUGE} OK\n# Avg bus bandwidth : 1\n", "NVC713"),
        (f"x NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes {HUGE}\n{inf_summary('1')}", "NVC713"),
        (f"{HEADER}\n {HUGE} 2 float sum -1 1 1 1 0 1 1 1 0\n# Avg bus bandwidth : 1\n", "NVC713"),
    ],
    ids=["avg-inf", "avg-nan", "row-inf", "out-of-bounds", "nodes", "size"],
)
def test_the_nccl_crashes_are_refusals_with_a_code(text: str, code: str) -> None:
    with pytest.raises(InputLimitError) as raised:
        parse_nccl(text, "x.log")
    assert raised.value.code == code


def test_the_refusal_names_its_line(tmp_path: Path) -> None:
    log = tmp_path / "inf.log"
    log.write_text(inf_summary("inf"), encoding="utf-8")
    [found] = ingest_nccl([log]).diagnostics
    assert (found.code, found.span.line) == ("NVC715", 4)
    assert "'Avg bus bandwidth' is 'inf'" in found.message


def _dcgm_json(gpu_ids: object) -> str:
    result = {"gpu_ids": gpu_ids, "status": "Pass"}
    tests = [{"name": "pcie", "results": [result]}]
    return json.dumps({"DCGM Diagnostic": {"test_categories": [{"tests": tests}]}})


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (_dcgm_json(HUGE), "NVC713"),  # a string of digits
        (_dcgm_json(int("9" * 4000)), "NVC713"),  # a number JSON decodes
        ('{"DCGM Diagnostic": {"version": ' + HUGE + "}}", "NVC713"),  # the decoder's own
        ('{"DCGM Diagnostic": ' + "[" * 100_000 + "]" * 100_000 + "}", "NVC714"),
        (
            "+---+---+\n| Diagnostic | Result |\n+---+---+\n| pcie | Pass |\n|  | GPU"
            + HUGE
            + ": Pass |",
            "NVC713",
        ),
        (
            "+---+---+\n| Diagnostic | Result |\n+---+---+\n| pcie | Fail - GPU: " + HUGE + " |",
            "NVC713",
        ),
    ],
    ids=["gpu-ids-text", "gpu-ids-int", "decoder", "nesting", "text-gpu-row", "text-scope"],
)
def test_the_dcgm_crashes_are_refusals_with_a_code(text: str, code: str) -> None:
    with pytest.raises(InputLimitError) as raised:
        parse_dcgm(text, "x.log")
    assert raised.value.code == code


def test_the_digit_bound_is_exact() -> None:
    assert bounded_int("9" * MAX_DIGITS, "n") == int("9" * MAX_DIGITS)
    with pytest.raises(InputLimitError):
        bounded_int("9" * (MAX_DIGITS + 1), "n")


@BUDGET
@given(st.one_of(lines_of(NCCL_FRAGMENTS), mutated(real_logs("nccl-tests"))))
@pytest.mark.slow
def test_fuzz_nccl_reader(text: str) -> None:
    try:
        runs = parse_nccl(text, "fuzz.log")
    except IngestFormatError as exc:
        assert str(exc)  # a refusal says why
    else:
        assert all(run.file == "fuzz.log" for run in runs)
        json.dumps([run.to_json() for run in runs], allow_nan=False)  # finite, printable


@BUDGET
@given(
    st.one_of(
        lines_of(DCGM_FRAGMENTS),
        mutated(real_logs("dcgm")),
        st.lists(st.sampled_from(DCGM_FRAGMENTS) | hostile_token).map("".join),
    )
)
def test_fuzz_dcgm_reader(text: str) -> None:
    try:
        runs = parse_dcgm(text, "fuzz.log")
    except IngestFormatError as exc:
        assert str(exc)  # a refusal says why
    else:
        assert all(run.file == "fuzz.log" for run in runs)
        json.dumps([run.to_json() for run in runs], allow_nan=False)  # finite, printable
