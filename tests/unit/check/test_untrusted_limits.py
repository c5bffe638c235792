"""Untrusted sites and out/ trees give diagnostics, never an internal error (issue #20).

Reproducers: a 5000-digit number in a site (`validate`, `render`) and in an out/ file
(`check`), 100,000 nested brackets in `index.json` (`check`, `render --check`, `render`),
a 100 MB site (read whole before the size check), a 1 MiB line echoed whole, and keys
given twice in an out/ file (the last one won).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.commands.diagnostics import CUT, MAX_EXCERPT, excerpt
from nvcregen.spec.bounded import MAX_INT_DIGITS, RefusedInputError, load_json, read_limited
from nvcregen.spec.fast import parse_fast

ROOT = Path(__file__).resolve().parents[3]
SITE = (ROOT / "sites" / "l20-pool.yaml").read_text()
HUGE = "9" * 5000


def run(args: list[str]) -> Result:
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 70, result.output + result.stderr
    assert "internal error" not in result.output + result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the l20-pool site rendered into out/."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "l20-pool.yaml").write_text(SITE)
    assert CliRunner().invoke(main, ["render"]).exit_code == 0
    return tmp_path


@pytest.mark.parametrize("command", ["validate", "render"])
def test_a_huge_number_in_a_site_is_nvc118(project: Path, command: str) -> None:
    site = project / "sites" / "l20-pool.yaml"
    site.write_text(SITE.replace("nodeCount: 4", f"nodeCount: {HUGE}"))
    done = run([command, "sites/l20-pool.yaml"])
    assert done.exit_code == 2
    line = next(n for n, text in enumerate(SITE.splitlines(), 1) if "nodeCount: 4" in text)
    assert f"sites/l20-pool.yaml:{line}:18: error[NVC118]" in done.stderr
    assert HUGE not in done.stderr  # the excerpt is cut around the column
    assert CUT in done.stderr


def test_a_huge_number_in_an_out_file_is_nvc605(project: Path) -> None:
    file = project / "out" / "l20-pool" / "gitops" / "gitrepository-l20-pool.yaml"
    text = file.read_text()
    file.write_text(text.replace("metadata:\n", f"metadata:\n  generation: {HUGE}\n", 1))
    line = file.read_text().splitlines().index(f"  generation: {HUGE}") + 1
    done = run(["check", "out"])
    assert done.exit_code == 1  # findings
    assert f"gitrepository-l20-pool.yaml:{line}:15: error[NVC605]" in done.stderr


@pytest.mark.parametrize(
    ("index", "code"),
    [
        ("[" * 100_000 + "]" * 100_000, "NVC606"),
        ('{"files": {}, "n": ' + HUGE + "}", "NVC605"),
        ('{"files": {}, "files": {}}', "NVC607"),
        ("{not json", "NVC608"),
        ("[]", "NVC608"),
    ],
)
def test_a_hostile_index_is_a_finding_at_the_file(project: Path, index: str, code: str) -> None:
    (project / "out" / "l20-pool" / "index.json").write_text(index)
    done = run(["check", "out"])
    assert done.exit_code == 1  # findings
    assert f"out/l20-pool/index.json:1:1: error[{code}]" in done.stderr
    # render --check compiles the site again (its cache cannot be read) and says it differs
    assert run(["render", "--check"]).exit_code == 1
    # render refuses to replace a folder whose index it cannot read (NVC502)
    refused = run(["render"])
    assert refused.exit_code == 2 and "NVC502" in refused.stderr


def test_keys_given_twice_in_an_out_file_are_nvc607(project: Path) -> None:
    file = project / "out" / "l20-pool" / "gitops" / "gitrepository-l20-pool.yaml"
    text = file.read_text()
    file.write_text(text.replace("metadata:\n", "metadata:\n  name: a\n  name: b\n", 1))
    line = file.read_text().splitlines().index("  name: b") + 1
    done = run(["check", "out"])
    assert done.exit_code == 1  # findings
    assert f"gitrepository-l20-pool.yaml:{line}:3: error[NVC607]" in done.stderr


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"a: 1\nb: 2\na: 3\n", "NVC607"),
        (b"x:\n  - {k: 1, k: 2}\n", "NVC607"),
        (b"n: " + b"9" * (MAX_INT_DIGITS + 1), "NVC605"),
        (b"n: 0x" + b"f" * 5000, "NVC605"),  # hex converts at any length; no message prints it
        (b"n: 0b" + b"1" * 20000, "NVC605"),
    ],
)
def test_the_fast_loader_refuses_with_a_code(raw: bytes, code: str) -> None:
    with pytest.raises(RefusedInputError) as caught:
        parse_fast(raw)
    assert caught.value.code == code


def test_the_fast_loader_reads_a_number_at_the_limit() -> None:
    assert parse_fast(b"n: " + b"9" * MAX_INT_DIGITS) == {"n": int("9" * MAX_INT_DIGITS)}
    assert load_json("[" + "9" * MAX_INT_DIGITS + "]") == [int("9" * MAX_INT_DIGITS)]
    with pytest.raises(RefusedInputError):
        load_json("[" + "9" * (MAX_INT_DIGITS + 1) + "]")


def test_read_limited_tells_the_size_before_reading(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_bytes(b"x" * 10)
    assert read_limited(file, 10) == b"x" * 10
    assert read_limited(file, 9) is None


@pytest.mark.parametrize(("grown", "limit", "read"), [(4, 10, True), (7, 10, False)])
def test_read_limited_reads_a_file_grown_since_its_size_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grown: int, limit: int, read: bool
) -> None:
    """fstat saw 6 bytes; the file holds 6 + `grown`: read whole up to `limit`, else None."""
    file = tmp_path / "f"
    file.write_bytes(b"x" * (6 + grown))
    real = os.fstat

    def smaller(fd: int) -> os.stat_result:
        found = real(fd)
        return os.stat_result((*found[:6], 6, *found[7:]))

    monkeypatch.setattr(os, "fstat", smaller)
    assert read_limited(file, limit) == (b"x" * (6 + grown) if read else None)


@pytest.mark.slow
def test_a_100_mb_site_is_refused_without_being_read(tmp_path: Path) -> None:
    """The resident set stays far below the file's size (372 MB before)."""
    site = tmp_path / "sites" / "big.yaml"
    site.parent.mkdir()
    with site.open("wb") as handle:
        handle.write(SITE.encode())
        handle.write(b"#" + b"x" * (100 * 1024 * 1024) + b"\n")
    script = (  # VmHWM: this process's peak resident set (ru_maxrss keeps the parent's)
        "import re, sys\n"
        "from nvcregen.cli import main\n"
        "try:\n"
        "    main(['validate', sys.argv[1]])\n"
        "except SystemExit as exc:\n"
        "    status = open('/proc/self/status').read()\n"
        "    print(exc.code, re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(site)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    code, peak_kib = done.stdout.split()
    assert code == "2" and "error[NVC110]" in done.stderr
    assert int(peak_kib) < 100 * 1024  # KiB: less than the file, which is never read whole


@pytest.mark.parametrize(
    ("length", "column", "expected"),
    [
        (MAX_EXCERPT, 5, ("x" * MAX_EXCERPT, 5, 3)),
        (MAX_EXCERPT + 1, 1, ("x" * MAX_EXCERPT + CUT, 1, 3)),
        (1 << 20, 500_000, (CUT + "x" * MAX_EXCERPT + CUT, MAX_EXCERPT // 4 + 2, 3)),
        (1 << 20, 1 << 20, (CUT + "x" * MAX_EXCERPT, MAX_EXCERPT + 1, 1)),
    ],
)
def test_an_excerpt_is_cut_around_its_column(
    length: int, column: int, expected: tuple[str, int, int]
) -> None:
    assert excerpt("x" * length, column, 3) == expected


def test_a_1_mib_line_is_not_echoed_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    long = "y" * (1 << 20)
    (tmp_path / "s.yaml").write_text(SITE.replace("cluster: l20-prod-b", f"cluster: {long}"))
    done = run(["validate", "s.yaml", "--format", "text"])
    assert done.exit_code == 2
    assert max(len(line) for line in done.stderr.splitlines()) < 1200
    as_json = run(["validate", "s.yaml", "--format", "json"])
    assert long not in as_json.output + as_json.stderr
    assert json.loads(as_json.output or as_json.stderr)
