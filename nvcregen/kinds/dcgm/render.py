"""The text form of `nvcregen ingest dcgm`: one block per `dcgmi diag` run, a row per test."""

from __future__ import annotations

from nvcregen.ingest.models import DcgmRun, DcgmTest
from nvcregen.ingest.render import table
from nvcregen.kinds.dcgm.files import DcgmFiles


def render_dcgm(result: DcgmFiles) -> str:
    """Each run's diagnostics, their GPUs and what DCGM said of them."""
    return "".join(_dcgm_run(run) for run in result.runs)


def _dcgm_run(run: DcgmRun) -> str:
    facts: list[str] = [run.format]
    if run.dcgm_version:
        facts.append(f"DCGM {run.dcgm_version}")
    if run.level is not None:
        facts.append(f"level {run.level}")
    text = f"{run.file}: {run.status} ({', '.join(facts)})\n"
    rows = [[t.category, t.name, t.result, _gpus(t)] for t in run.tests]
    text += table(("category", "test", "result", "gpus"), rows, indent="  ")
    for test in run.tests:
        text += "".join(f"  {test.name}: warning: {e}\n" for e in test.errors)
        text += "".join(f"  {test.name}: info: {i}\n" for i in test.info)
    text += "".join(f"  error: {error}\n" for error in run.errors)
    return text + "\n"


def _gpus(test: DcgmTest) -> str:
    """Per-GPU results, never contradicting the test's own.

    A test DCGM failed while every GPU passed failed outside them (an internal error, a
    plugin that crashed): the cell says that instead of `4 x Pass`.
    """
    if not test.gpus:
        return ""
    if test.result == "Fail" and not any(gpu.result == "Fail" for gpu in test.gpus):
        return f"no GPU of {len(test.gpus)} failed: the test itself did"
    if all(gpu.result == test.gpus[0].result for gpu in test.gpus):
        return f"{len(test.gpus)} x {test.gpus[0].result}"
    return " ".join(f"{gpu.id}:{gpu.result}" for gpu in test.gpus)
