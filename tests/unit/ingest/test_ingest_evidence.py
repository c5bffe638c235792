"""Issue #21: who ran each rank, transports of failed runs, `--at` on one round, DCGM excerpts."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.ingest import parse_dcgm
from nvcregen.kinds.nccl.models import Rank
from nvcregen.kinds.nccl.reader import parse_nccl

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / "tests" / "fixtures" / "real-logs"
WRITTEN = ROOT / "tests" / "fixtures" / "written-logs"
OCI = REAL / "nccl-tests" / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
OFI = WRITTEN / "nccl-tests" / "allreduce-2node-efa-ofi-init-then-crash.txt"
CYCLES = WRITTEN / "nccl-tests" / "allreduce-2node-one-round-three-cycles.txt"
EXCERPT = WRITTEN / "dcgm" / "dcgm-3.3.8-diag-r1-text-excerpt-no-top-border-wrapped-row.txt"


def test_every_rank_names_its_host_device_and_model() -> None:
    (run,) = parse_nccl(OCI.read_text(), "oci")
    assert len(run.ranks) == 16
    assert run.ranks[0] == Rank(0, "inst-xxxxx-h100-ol89", 0, "NVIDIA H100 80GB HBM3")
    assert run.ranks[15] == Rank(15, "inst-yyyyy-h100-ol89", 7, "NVIDIA H100 80GB HBM3")
    old = REAL / "nccl-tests" / "superbench-2021-old-format-1node-8xA100-allgather-validation0.txt"
    (legacy,) = parse_nccl(old.read_text(), "old")  # `# Rank 0 Pid ... on localhost`, no Group
    assert {(r.host, r.model) for r in legacy.ranks} == {("localhost", "A100-SXM4-40GB")}


def test_a_crash_after_ofi_init_keeps_aws_libfabric_and_the_driver() -> None:
    (run,) = parse_nccl(OFI.read_text(), "ofi")
    assert run.status == "failed"
    assert run.transports == ("AWS Libfabric",)
    assert (run.cuda_driver, run.nccl_versions) == (("12.4",), ("2.21.5+cuda12.4",))


def test_at_selects_a_size_from_one_round_of_several_cycles() -> None:
    plain = CliRunner().invoke(main, ["ingest", "nccl", str(CYCLES)])
    at = CliRunner().invoke(main, ["ingest", "nccl", str(CYCLES), "--at", "1GiB"])
    assert (plain.exit_code, at.exit_code) == (0, 0)
    assert at.stdout != plain.stdout
    assert "medians over rounds" not in plain.stdout  # one round: nothing to pool
    line = at.stdout.splitlines()[-1].split()
    assert line[-6:-3] == ["1GiB", "1", str(round((446.28 + 444.38 + 447.60) / 3, 4))]


def test_a_dcgm_excerpt_is_read_and_marked_truncated() -> None:
    (run,) = parse_dcgm(EXCERPT.read_text(), "excerpt")
    assert (run.status, run.level, len(run.tests)) == ("truncated", 1, 7)
    assert run.tests[4].info == (
        "Persistence mode for GPU 0 is disabled. Enable persistence mode by running the"
        " following command as root: nvidia-smi -pm 1",
    )  # the row the terminal wrapped is joined back
    assert run.errors == (
        "the table has no top border or header: an excerpt from inside it",
        "the table has no closing border: output cut short",
    )


def test_a_failing_excerpt_fails(tmp_path: Path) -> None:
    text = EXCERPT.read_text().replace("| Denylist                  | Pass", "| Denylist  | Fail")
    (run,) = parse_dcgm(text, "excerpt")
    assert (run.status, run.tests[0].result) == ("failed", "Fail")


def test_dcgm_exit_codes_say_pass_fail_or_unreadable(tmp_path: Path) -> None:
    passed = REAL / "dcgm" / "dcgm-3.1.0-diag-json-with-warning-prefix-and-nulls.txt"
    failed = REAL / "dcgm" / "dcgm-4.2.3-diag-text-4gpu-pcie-fail-internal-error.txt"
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    codes = [
        CliRunner().invoke(main, ["ingest", "dcgm", str(f)]).exit_code
        for f in (passed, failed, junk)
    ]
    assert codes == [0, 1, 2]


def test_the_text_output_says_who_ran_the_ranks() -> None:
    lines = CliRunner().invoke(main, ["ingest", "nccl", str(OFI)]).stdout.splitlines()
    assert lines[1] == (
        "  ranks: 2 on 2 host(s) (efa-node-a, efa-node-b): NVIDIA H100 80GB HBM3;"
        " NCCL 2.21.5+cuda12.4; CUDA driver 12.4"
    )


def test_names_from_the_device_list_carry_no_control_characters() -> None:
    line = "#  Rank  0 Group  0 Pid 1 on node\x1b[2J device  0 [0x0f] NVIDIA\x07 H100\n"
    (run,) = parse_nccl(line + OCI.read_text().split("#\n", 2)[2], "hostile")
    assert run.ranks[0] == Rank(0, "node?[2J", 0, "NVIDIA? H100")
