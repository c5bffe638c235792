"""Read a burn-in: DCGM's targeted (or SM) stress result, GPU by GPU (pure, bounded).

The log is `dcgmi diag` output (JSON of `--json`, or the text table), read by `ingest/dcgmdiag.py`;
this module takes its stress test apart by GPU. DCGM names each GPU in its messages
(NVIDIA/DCGM `nvvs/plugin_src/targetedstress/TargetedStress_wrapper.cpp`,
`dcgmlib/dcgm_errors.h`, `nvvs/src/DcgmRecorder.cpp`):

```
GPU 3 relative stress level	29412          (a pass, with --verbose: the average GFLOPS)
Max stress level of 21000.2 did not reach desired stress level of 29250.0 for GPU 5
Clocks event for GPU 2 because of clocks event starting 41.0 seconds into the test. ...
Detected clocks event due to thermal violation in GPU 4.
```

SM stress (`sm_stress`, DCGM's other SGEMM plugin) prints the same figures (`level:`,
older releases `did not exceed`) and is read the same way. A figure is a number of at
most `MAX_DIGITS` digits before the point and finite; a line is read up to
`limits.MAX_LINE`. Any other message naming a GPU is that GPU's error; one naming none
is the run's, and so is another test of the same run that DCGM failed (its deployment
checks run before the load).

DCGM's JSON names GPUs by index only; nvcregen's script prints each GPU's UUID first, one
`@@nvcregen-gpu index=N uuid=GPU-...` line a GPU (from `nvidia-smi`), so a verdict names
the GPU's UUID beside its index where the log holds the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.ingest.limits import MAX_DIGITS, finite, matched
from nvcregen.ingest.lines import strip_prefix
from nvcregen.ingest.models import DcgmRun, DcgmTest, IngestFormatError, Json, RunStatus

MARK = "@@nvcregen-burnin"  # the script's begin line (`ingest/beginline.py`'s form)
Basis = Literal["average", "best"]  # what DCGM's figure is: a pass's mean, a failure's max
STRESS_TESTS = ("targeted_stress", "sm_stress")  # names as `_key` writes them
_NUMBER = rf"\d{{1,{MAX_DIGITS}}}(?:\.\d{{1,12}})?"
_AVERAGE = re.compile(rf"\bGPU (\d{{1,4}}) relative stress level:?\s+({_NUMBER})\b")
_BEST = re.compile(
    rf"Max stress level of ({_NUMBER}) did not (?:reach|exceed) desired stress level of"
    rf" ({_NUMBER}) for GPU (\d{{1,4}})\b"
)
_CLOCKS = (
    re.compile(r"\bClocks (?:event for|are being throttled for) GPU (\d{1,4})\b"),
    re.compile(r"\b(?:clocks event|clock throttling) due to \w+ violation in GPU (\d{1,4})\b"),
)
_GPU = re.compile(r"\bGPU (\d{1,4})\b")
UUID_MARK = "@@nvcregen-gpu"
_UUID = re.compile(rf"^{UUID_MARK} index=(\d{{1,4}}) uuid=(GPU-[0-9A-Fa-f-]{{1,64}})$")


@dataclass(frozen=True)
class GpuLoad:
    """What DCGM said of one GPU under the load.

    Attributes:
        gpu: DCGM's GPU id (the node's GPU index).
        result: DCGM's word for it (Pass, Fail, Skip, Warn), "" where it gives none.
        gflops: The figure DCGM printed, None without one.
        basis: `average` (a pass) or `best` (the highest rate of a GPU under its target).
        throttled: Clocks-event messages naming it.
        errors: Its other warnings.

    """

    gpu: int
    result: str = ""
    gflops: float | None = None
    basis: Basis | None = None
    throttled: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    def to_json(self) -> Json:
        """The JSON object of this GPU."""
        return {
            "gpu": self.gpu,
            "result": self.result,
            "gflops": self.gflops,
            "basis": self.basis,
            "throttled": list(self.throttled),
            "errors": list(self.errors),
        }


@dataclass(frozen=True)
class BurnInRun:
    """One burn-in's stress result: its GPUs in id order and what the run itself said."""

    file: str
    test: str  # the stress test as DCGM named it; "" when DCGM ran none (a runtime error)
    status: RunStatus
    gpus: tuple[GpuLoad, ...]
    dcgm_version: str | None = None
    errors: tuple[str, ...] = ()
    uuids: tuple[tuple[int, str], ...] = ()  # (index, UUID) as the script's lines name them

    def where(self, gpu: int) -> str:
        """`GPU 3`, or `GPU 3 (GPU-8c1e...)` where the log names its UUID."""
        uuid = dict(self.uuids).get(gpu)
        return f"GPU {gpu}" + (f" ({uuid})" if uuid else "")

    def to_json(self) -> Json:
        """The JSON object of this run."""
        return {
            "file": self.file,
            "test": self.test,
            "status": self.status,
            "dcgm_version": self.dcgm_version,
            "gpus": [g.to_json() for g in self.gpus],
            "errors": list(self.errors),
            "uuids": {str(i): u for i, u in self.uuids},
        }


def parse_burnin(text: str, source: str) -> BurnInRun:
    """The last burn-in of a `dcgmi diag` output.

    A run that DCGM stopped before its stress test because another test failed (`--fail-early`,
    a GPU that does not start) is a failed burn-in without figures.

    Raises:
        IngestFormatError: Not `dcgmi diag` output, or one without a stress test and without
            a failed test (another diagnostic is no burn-in); an `InputLimitError` for a
            bound broken.

    """
    run = parse_dcgm(text, source)[-1]
    uuids = gpu_uuids(text)
    if not run.tests and run.status == "failed":  # DCGM gave up before any test ran
        return BurnInRun(source, "", "failed", (), run.dcgm_version, run.errors, uuids)
    stress = [t for t in run.tests if _key(t.name) in STRESS_TESTS]
    if not stress and (failed := _failures(run, None)):  # `--fail-early`: stopped before it
        return BurnInRun(source, "", "failed", (), run.dcgm_version, (*run.errors, *failed), uuids)
    if not stress:
        names = ", ".join(t.name for t in run.tests) or "none"
        raise IngestFormatError(
            f"dcgmi diag output without a targeted_stress or sm_stress result (tests: {names})"
        )
    # The test that ran (a skipped one holds no figure), targeted stress before SM stress.
    test = max(stress, key=lambda t: (t.result != "Skip", _key(t.name) == STRESS_TESTS[0]))
    return replace(_run(run, test), uuids=uuids)


def gpu_uuids(text: str) -> tuple[tuple[int, str], ...]:
    """Each GPU's UUID as the script's `@@nvcregen-gpu` lines name it; the first line wins."""
    found: dict[int, str] = {}
    for raw in text.splitlines():
        if UUID_MARK not in raw[:200]:
            continue
        if match := _UUID.match(strip_prefix(matched(raw)).strip()):
            found.setdefault(int(match[1]), match[2])
    return tuple(sorted(found.items()))


def _key(name: str) -> str:
    """`Targeted Stress`, `targeted_stress` and `SM Stress` as one spelling each."""
    return re.sub(r"[\s-]+", "_", name.strip().lower())


def _failures(run: DcgmRun, test: DcgmTest | None) -> list[str]:
    """The other tests DCGM failed in the run (persistence, retired pages, GPU memory)."""
    found = []
    for other in run.tests:
        if other is not test and other.result == "Fail":
            why = f": {matched(other.errors[0])}" if other.errors else ""
            found.append(f"{other.name} failed{why}")
    return found


@dataclass
class _Acc:
    """What is known of one GPU so far, while the messages are read."""

    result: str = ""
    gflops: float | None = None
    basis: Basis | None = None
    throttled: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def figure(self, text: str, basis: Basis) -> None:
        """A figure; a pass's average wins over a best, the first of each kind is kept."""
        if self.basis in ("average", basis):
            return
        self.gflops = finite(text, "a GFLOPS figure")
        self.basis = basis


def _run(run: DcgmRun, test: DcgmTest) -> BurnInRun:
    loads: dict[int, _Acc] = {}

    def gpu(number: str | int) -> _Acc:
        return loads.setdefault(int(number), _Acc())

    for g in test.gpus:
        gpu(g.id).result = g.result
    run_errors: list[str] = [*run.errors, *_failures(run, test)]
    messages = [*test.info, *(i for g in test.gpus for i in g.info)]
    for line in dict.fromkeys(matched(m) for m in messages):
        if found := _AVERAGE.search(line):
            gpu(found[1]).figure(found[2], "average")
    for line in dict.fromkeys(matched(m) for m in test.errors):
        if found := _BEST.search(line):
            gpu(found[3]).figure(found[1], "best")
        elif clocks := next((m for c in _CLOCKS if (m := c.search(line))), None):
            gpu(clocks[1]).throttled.append(line)
        elif named := _GPU.search(line):
            gpu(named[1]).errors.append(line)
        else:
            run_errors.append(line)
    gpus = tuple(
        GpuLoad(n, a.result, a.gflops, a.basis, tuple(a.throttled), tuple(a.errors))
        for n, a in sorted(loads.items())
    )
    return BurnInRun(run.file, test.name, run.status, gpus, run.dcgm_version, tuple(run_errors))
