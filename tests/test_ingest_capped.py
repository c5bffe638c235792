"""`nvcregen ingest` reads at most its cap from a file, a FIFO, a device or stdin (#32).

`ingest node` checked a file's size with `stat` and `ingest nccl|dcgm` checked nothing,
then both read to the end: a FIFO or `/dev/stdin` (whose `stat` size is 0) and
`/dev/zero` were read without bound. Each now reads one byte past its cap at most and
refuses the input (exit 2). Runs that could read without bound go through a child
process under a memory limit and a timeout, so a regression fails instead of filling
the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.ingest import limits
from nvcregen.ingest.capped import TooLargeError, read_capped, too_large
from nvcregen.kinds.node import files as node_files

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fixtures" / "real-logs"
NCCL_LOG = LOGS / "nccl-tests" / "allreduce-2node-16xH100-oci-roce-nccl2.21.5-container.txt"
DCGM_LOG = LOGS / "dcgm" / "dcgm-4.4.1-diag-r2-text-8xB200-slurm-pcie-fail.txt"
NODE_XML = ROOT / "tests" / "fixtures" / "node" / "h200-vm" / "nvidia-smi-q.xml"
MEMORY = 1 << 30  # the child's address space: far above a capped read, far below unbounded
TIMEOUT = 120


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO in a folder of its own (a node's capture folder)."""
    path = tmp_path / "node-a" / "stream.log"
    path.parent.mkdir()
    os.mkfifo(path)
    yield path
    for writer in _WRITERS:
        writer.join(timeout=TIMEOUT)
    _WRITERS.clear()


_WRITERS: list[threading.Thread] = []


def feed(path: Path, data: bytes) -> Path:
    """`path` (a FIFO), a thread writing `data` into it once a reader opens it."""

    def write() -> None:
        try:
            with path.open("wb") as handle:
                handle.write(data)
        except BrokenPipeError:  # the reader stopped at its cap and closed
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    _WRITERS.append(writer)
    return path


def child(
    *args: str, cap: int | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[str]:
    """`nvcregen ARGS` in a child under `MEMORY`; `cap` sets `MAX_LOG_BYTES` smaller."""
    patch = "" if cap is None else f"import nvcregen.ingest.limits as m; m.MAX_LOG_BYTES = {cap}; "
    code = f"import sys; {patch}from nvcregen.cli import main; main(sys.argv[1:])"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin.decode("latin-1"),
        capture_output=True,
        text=True,
        encoding="latin-1",
        check=False,
        timeout=TIMEOUT,
        preexec_fn=limit,  # nothing but the limit before exec
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


# --- the reader -------------------------------------------------------------------------


def test_a_file_at_the_cap_is_read_and_one_byte_over_is_refused_unread(tmp_path: Path) -> None:
    at, over = tmp_path / "at", tmp_path / "over"
    at.write_bytes(b"x" * 100)
    over.write_bytes(b"x" * 101)
    assert read_capped(at, 100) == b"x" * 100
    with pytest.raises(TooLargeError) as refused:
        read_capped(over, 100)
    assert (refused.value.cap, refused.value.size) == (100, 101)  # told by fstat, not read
    assert too_large(refused.value, "a log") == (
        "larger than 100 bytes (101 bytes): `ingest` reads at most 100 bytes of a log"
    )


def test_a_fifo_at_the_cap_is_read_and_one_byte_over_is_refused(fifo: Path) -> None:
    assert read_capped(feed(fifo, b"y" * 4096), 4096) == b"y" * 4096
    with pytest.raises(TooLargeError) as refused:
        read_capped(feed(fifo, b"y" * 4097), 4096)
    assert (refused.value.cap, refused.value.size) == (4096, None)
    assert too_large(refused.value, "a log") == (
        "larger than 4 KiB: `ingest` reads at most 4 KiB of a log, and read no further"
    )


def test_dev_zero_is_read_one_byte_past_the_cap_then_refused() -> None:
    with pytest.raises(TooLargeError) as refused:
        read_capped(Path("/dev/zero"), 1 << 20)
    assert refused.value.size is None


# --- ingest nccl and dcgm ------------------------------------------------------------------


def test_ingest_nccl_reads_a_fifo_up_to_its_cap(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = NCCL_LOG.read_bytes()
    monkeypatch.setattr(limits, "MAX_LOG_BYTES", len(log))
    result = run("ingest", "nccl", feed(fifo, log))
    assert result.exit_code == 0, result.output  # at the cap: read and parsed
    refused = run("ingest", "nccl", feed(fifo, log + b"\n" * 64 * 1024))
    assert refused.exit_code == 2
    assert f"{fifo}:1:1: error[NVC700]: larger than {len(log)} bytes: `ingest` reads" in (
        refused.stderr
    )
    assert "read no further" in refused.stderr
    assert "give the log itself, not a stream or device that never ends" in refused.stderr


def test_ingest_dcgm_refuses_a_fifo_past_its_cap(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_LOG_BYTES", 1024)
    refused = run("ingest", "dcgm", feed(fifo, DCGM_LOG.read_bytes()))
    assert refused.exit_code == 2
    assert f"{fifo}:1:1: error[NVC700]: larger than 1 KiB" in refused.stderr


def test_ingest_nccl_refuses_a_regular_file_past_its_cap_and_reads_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = NCCL_LOG.read_bytes()
    big = tmp_path / "big.log"
    big.write_bytes(log + b"\n")
    monkeypatch.setattr(limits, "MAX_LOG_BYTES", len(log))
    result = run("ingest", "nccl", big, NCCL_LOG, "--format", "json")
    assert result.exit_code == 2
    assert f"{big}:1:1: error[NVC700]: larger than {len(log)} bytes ({len(log) + 1} bytes)" in (
        result.stderr
    )
    assert "read 1 of 2 files" in result.stderr


@pytest.mark.slow
def test_ingest_nccl_of_dev_zero_stops_at_the_cap() -> None:
    done = child("ingest", "nccl", "/dev/zero", cap=1 << 20)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "/dev/zero:1:1: error[NVC700]: larger than 1 MiB" in done.stderr


@pytest.mark.slow
def test_ingest_nccl_of_dev_zero_stops_at_the_real_cap() -> None:
    done = child("ingest", "nccl", "/dev/zero")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "/dev/zero:1:1: error[NVC700]: larger than 256 MiB" in done.stderr


@pytest.mark.slow
def test_ingest_nccl_of_stdin_stops_at_the_cap() -> None:
    log = NCCL_LOG.read_bytes()
    assert child("ingest", "nccl", "/dev/stdin", cap=len(log), stdin=log).returncode == 0
    done = child("ingest", "nccl", "/dev/stdin", cap=len(log), stdin=log + b" " * 70000)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"/dev/stdin:1:1: error[NVC700]: larger than {len(log)} bytes" in done.stderr


# --- ingest node ------------------------------------------------------------------------


def test_ingest_node_reads_a_fifo_up_to_its_cap(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xml = NODE_XML.read_bytes()
    monkeypatch.setattr(node_files, "MAX_BYTES", len(xml))
    result = run("ingest", "node", feed(fifo, xml))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("node-a: healthy")
    refused = run("ingest", "node", feed(fifo, xml + b" " * 70000))
    assert refused.exit_code == 2
    assert f"{fifo}:1:1: error[NVC800]: larger than {len(xml)} bytes: `ingest` reads" in (
        refused.stderr
    )
    assert "an 8-GPU `nvidia-smi -q -x` is about 250 KB" in refused.stderr


def test_ingest_node_of_dev_zero_stops_at_16_mib() -> None:
    done = child("ingest", "node", "/dev/zero")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "/dev/zero:1:1: error[NVC800]: larger than 16 MiB: `ingest` reads at most 16 MiB" in (
        done.stderr
    )


@pytest.mark.slow
def test_ingest_node_of_stdin_stops_at_16_mib() -> None:
    done = child("ingest", "node", "/dev/stdin", stdin=b" " * (16 * 1024 * 1024 + 1))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "/dev/stdin:1:1: error[NVC800]: larger than 16 MiB" in done.stderr
