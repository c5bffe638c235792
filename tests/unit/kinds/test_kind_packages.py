"""Each moved kind is one package (issue 35 item 2, issue 36's last Done-when).

For every kind moved into its package, every file under `nvcregen/` that names it (its
modules by their old and new names, its params class, its template, its begin mark) sits
in its package, but for the one registration line (`kindapi/registry.py`); its catalog
block is a field of the model built from the registry (`catalog/kindblocks.py`), which
names no kind; its catalog entry is `catalog/tests/<file>.yaml`, its tests under
`tests/unit/kinds/<kind>/`. Adding such a kind is one package, one catalog file, its
tests and its registration line (`tests/unit/catalog/test_kind_blocks.py` adds one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from nvcregen.catalog.kindblocks import entry_model
from nvcregen.kindapi.registry import KIND_MODULES, KINDS, package_of

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "nvcregen"
ALLOWED = ("nvcregen/kindapi/registry.py",)


@dataclass(frozen=True)
class Moved:
    """A kind moved into its package, and what names it anywhere else."""

    name: str
    catalog: str  # its file under catalog/tests/
    names: str  # a pattern of its module names, params classes, template and mark
    builds_on_it: tuple[str, ...] = ()  # kind packages allowed to use it (the pair form)
    test_names: tuple[str, ...] = ()  # its tests' names (else `test_*<name>*.py`)


MOVED = (
    Moved(
        "burnin",
        "burn-in.yaml",
        r"\bkinds[./]burnin\b|\bburnin_(judge|files)\b|\bburninruns\b|\b(ingest|makers)[./]burnin\b"
        r"|\bBurnIn(Params|Expectation|Run|Ingest|Verdict)\b|\bburn-in\.sh\.j2\b"
        r"|@@nvcregen-burnin\b|\bBURNIN_MARK\b",
    ),
    Moved(
        "nvbandwidth",
        "nvbandwidth.yaml",
        r"\bkinds[./]nvbandwidth\b|\bnvbw_[a-z]+\b|\bnvbwruns\b|\b(ingest|makers)[./]nvbandwidth\b"
        r"|\bNvbandwidth(Params|Floor)\b|\bNvbw(Run|Ingest)\b|\bnvbandwidth\.sh\.j2\b"
        r"|@@nvcregen-nvbandwidth\b|\bNVBW_MARK\b",
    ),
    Moved(
        "training",
        "training-goodput.yaml",
        r"\bkinds[./]training\b|\bTrainingParams\b|\bTraining\((TestKind)?\)"
        r"|GoodputMeasurement, not from a log",
    ),
    Moved(
        "linkcounters",
        "link-counters.yaml",
        r"\bkinds[./]linkcounters\b|\blinkcounter_files\b|\blinkcounterruns\b"
        r"|\b(ingest|makers)[./]linkcounters\b|\bLinkCountersParams\b|\bCounterLimit\b"
        r"|\blink-counters\.sh\.j2\b|@@nvcregen-linkctr\b|\bLINKCTR_MARK\b",
    ),
    Moved(
        "rdma",
        "rdma-rails.yaml",
        r"\bkinds[./]rdma\b|\bperftest_files\b|\brdmarails\b|\b(ingest|makers)[./](rdma|perftest)\b"
        r"|\bRdmaParams\b|\brdma-rails\.sh\.j2\b|@@nvcregen-rdma\b(?!-)|\bRDMA_MARK\b",
        builds_on_it=("rdmapair",),  # the pair form: the rails' params, reader and judge
    ),
    Moved(
        "rdmapair",
        "rdma-rails-pair.yaml",
        r"\bkinds[./]rdmapair\b|\b(results|makers|readiness)[./]rdmapair\b|\brdmapair\.py\b"
        r"|\brdma-pair-(server|client)\.sh\.j2\b|@@nvcregen-rdma-(server|client)\b"
        r"|\bRDMA_(SERVER|CLIENT)_MARK\b",
    ),
    Moved(
        "dcgm",
        "dcgm-l1.yaml",
        r"\bkinds[./]dcgm\b|\bmakers[./]dcgm\b|\bDcgmParams\b|\bdcgm-diag\.sh\.j2\b"
        r"|@@nvcregen-dcgm\b|\bdcgm(bind|job|_begin)\b|\b(bind_dcgm_log|dcgm_output|_read_dcgm)\b",
        test_names=("test_dcgm_*.py",),  # the `dcgmi diag` reader's (ingest's) stay
    ),
    Moved(
        "node",
        "node-health.yaml",
        r"\bkinds[./]node\b|\b(ingest|results|makers)[./](node_[a-z]+|nodehealth[a-z]*|node)\b"
        r"|\bnodehealthruns\b|\bNodeHealthParams\b|\bnode-health\.sh\.j2\b"
        r"|@@nvcregen-node-health\b",
        builds_on_it=("nvbandwidth",),  # its maker asks a node's expected GPUs
        test_names=("test_ingest_node*.py", "test_*nodehealth*.py"),  # collect's own stay
    ),
    Moved(
        "nccl",
        "nccl-all-reduce.yaml",
        r"\bkinds[./]nccl\b|\b(ingest|readiness|makers)[./](nccl|medians|runcheck|collective|launcher)\b"
        r"|\bingest[./]table\b|\b_?(parse|read|ingest|render)_nccl\b|\bNccl(Params|Files|Logs|Launch|Run|Row)\b"
        r"|\b(nccl_env|nccl_args|mpi_framework|mpirun_args)\b|\bMPIRUN\b",
        test_names=("test_*nccl*.py", "test_ingest_summary.py"),
    ),
)


def naming(kind: Moved) -> dict[str, list[str]]:
    """Each file outside the kind's package (and those built on it) naming it, and the lines."""
    own = [PACKAGE / "kinds" / name for name in (kind.name, *kind.builds_on_it)]
    pattern = re.compile(kind.names)
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*")):
        if not path.is_file() or any(o in path.parents for o in own):
            continue
        if "__pycache__" in path.parts:
            continue
        where = path.relative_to(ROOT).as_posix()
        if pattern.search(path.name):
            found.setdefault(where, []).append("(its file name)")
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        found_lines = [f"{n}: {t.strip()}" for n, t in enumerate(lines, 1) if pattern.search(t)]
        if found_lines:
            found.setdefault(where, []).extend(found_lines)
    return found


@pytest.mark.parametrize("kind", MOVED, ids=lambda k: k.name)
def test_only_the_registry_line_names_a_moved_kind(kind: Moved) -> None:
    found = naming(kind)
    outside = {f: lines for f, lines in found.items() if f not in ALLOWED}
    assert not outside, "\n".join(f"{f}:{line}" for f, ls in outside.items() for line in ls)
    (line,) = found["nvcregen/kindapi/registry.py"]
    assert f'"nvcregen.kinds.{kind.name}.kind"' in line  # the one registration line
    assert [m for m in KIND_MODULES if m.startswith(f"nvcregen.kinds.{kind.name}.")] == [
        f"nvcregen.kinds.{kind.name}.kind"
    ]
    block = entry_model().model_fields[kind.name]  # its block, from the registry
    assert block.annotation == KINDS[kind.name].params | None


@pytest.mark.parametrize("kind", MOVED, ids=lambda k: k.name)
def test_a_moved_kind_is_its_package_its_catalog_file_and_its_tests(kind: Moved) -> None:
    assert package_of(kind.name) == f"nvcregen.kinds.{kind.name}"
    assert KINDS[kind.name].name == kind.name
    assert (ROOT / "catalog" / "tests" / kind.catalog).is_file()
    tests = ROOT / "tests" / "unit" / "kinds" / kind.name
    assert sorted(tests.glob("test_*.py")), "its tests sit beside the package's"
    beside = [ROOT / "tests" / "unit" / "kinds" / name for name in (kind.name, *kind.builds_on_it)]
    elsewhere = [
        p.relative_to(ROOT).as_posix()
        for name in kind.test_names or (f"test_*{kind.name}*.py",)
        for p in (ROOT / "tests").rglob(name)
        if not any(b in p.parents for b in beside)
        and "_pair" not in p.name  # the shared burn-in/pair maker test
    ]
    assert not elsewhere


def test_the_pattern_finds_each_old_place_of_a_kind() -> None:
    burnin, nvbandwidth, *_ = MOVED
    pattern = re.compile(burnin.names)
    for text in (
        "from nvcregen.results.burninruns import read_burnin",
        "from nvcregen.ingest.burnin_judge import Bounds",
        "from nvcregen.rehearse.makers.burnin import burnin_output",
        "from nvcregen.ingest.burnin import parse_burnin",
        "params: BurnInParams",
        'NodeScript("burn-in.sh.j2", values)',
        'BURNIN_MARK = "@@nvcregen-burnin"',
    ):
        assert pattern.search(text), text
    for text in ("burn-in GPU 0 a tenth of its floor", "nvbandwidth, burnin: judge each GPU"):
        assert not pattern.search(text), text
    pattern = re.compile(nvbandwidth.names)
    for text in (
        "from nvcregen.results.nvbwruns import read_nvbandwidth",
        "from nvcregen.ingest.nvbw_files import model_bounds",
        "from nvcregen.rehearse.makers.nvbandwidth import nvbandwidth_output",
        "from nvcregen.kinds.nvbandwidth.physics import ceilings",
        "floor: NvbandwidthFloor",
        'NVBW_MARK = "@@nvcregen-nvbandwidth"',
    ):
        assert pattern.search(text), text
    assert not pattern.search("Read nccl-tests, dcgmi diag, nvidia-smi, nvbandwidth, perftest")
    pattern = re.compile(next(k for k in MOVED if k.name == "dcgm").names)
    for text in (
        "from nvcregen.results.dcgmbind import bind_dcgm_log",
        "from nvcregen.ingest.dcgm_begin import MARK",
        "from nvcregen.compile.readiness.dcgmjob import dcgm_jobs",
        "from nvcregen.rehearse.makers.dcgm import dcgm_output",
        'MARK = "@@nvcregen-dcgm"',
        'NodeScript("dcgm-diag.sh.j2", values)',
    ):
        assert pattern.search(text), text
    for text in (  # what every kind shares, and the `dcgmi diag` reader burn-in reads too
        "from nvcregen.results.nodebind import bind_node_log",
        "from nvcregen.ingest.dcgmdiag import parse_dcgm",
        "from nvcregen.rehearse.dcgmdiagprint import diag_json",
        "pool: spec.dependencies.dcgm.hostengine",
    ):
        assert not pattern.search(text), text
    pattern = re.compile(next(k for k in MOVED if k.name == "nccl").names)
    for text in (  # nccl's old places: its reader and helpers, its launch, logruns' reader
        "from nvcregen.ingest.nccl import parse_nccl",
        "from nvcregen.ingest.medians import summarize",
        "from nvcregen.ingest.table import Columns, RowError, is_row",
        "from nvcregen.ingest.runcheck import average_warning, failures",
        "from nvcregen.ingest.models import NcclRun, SummaryRow",
        "from nvcregen.compile.readiness.nccl import MPIRUN, nccl_args, nccl_env",
        "def _read_nccl(log: RunLog, placed: Placed, text: str, base: dict[str, Any]) -> _Read:",
        "from nvcregen.kinds.nccl.params import NcclParams",
    ):
        assert pattern.search(text), text
    for text in (  # what the collective kinds share, and nccl-tests named in words
        "from nvcregen.ingest.models import IngestFormatError, RunStatus",
        "from nvcregen.ingest.transport import detect_transports",
        "from nvcregen.compile.readiness.launch import launch_of",
        "Read nccl-tests, dcgmi diag, nvidia-smi, nvbandwidth, perftest",
        "pool: spec.images.nccl",
    ):
        assert not pattern.search(text), text
