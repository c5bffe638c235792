"""`nvcregen rehearse`: a rendered trainer-mode site on the real controllers, on fake nodes."""

from __future__ import annotations

import functools
import json
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from nvcregen.commands.common import exit_now, print_diagnostics
from nvcregen.commands.completion import complete_sites
from nvcregen.core.errors import ExitCode

if TYPE_CHECKING:  # the rehearsal is imported when the command runs (`--version` loads none)
    from nvcregen.rehearse.periodrun import PeriodRehearsal
    from nvcregen.rehearse.prepare import Prepared
    from nvcregen.rehearse.printer import Printer
    from nvcregen.rehearse.rehearsal import Settings
    from nvcregen.rehearse.report import Collected, Rehearsal

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _stop_on_signal(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM, like Ctrl-C, unwinds the rehearsal so that it stops what it started.

    Once: a second signal while it stops is ignored (every process it started also gets
    SIGKILL if nvcregen dies: `PR_SET_PDEATHSIG`).
    """
    for number in _SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def _scratch(keep: Path | None) -> Iterator[Path]:
    """The scratch folder: `keep` (kept), else a temporary one removed at the end."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    folder = Path(tempfile.mkdtemp(prefix="nvcregen-rehearse-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fail(message: str) -> None:
    click.echo(f"nvcregen: {message}", err=True)
    sys.exit(ExitCode.INVALID)


@click.command("rehearse")
@click.argument(
    "site", type=click.Path(path_type=Path, dir_okay=False), shell_complete=complete_sites
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: a table per step; json: as_planned, unadmitted, unfinished, steps.",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=1.0, max=1e6),
    default=100.0,
    show_default=True,
    help="Pods complete this many times faster than the plan's expected durations.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=1.0),
    default=600.0,
    show_default=True,
    help="Seconds from the first step; runs not admitted or finished by then are reported.",
)
@click.option(
    "--keep",
    type=click.Path(path_type=Path, file_okay=False),
    help="Keep the scratch folder (rendered tree, controllers' and pods' logs, the collected "
    "archive) here, an empty folder.",
)
@click.option(
    "--fail",
    "fail",
    metavar="NODE|LEAF-A,LEAF-B",
    help="That node's logs fail, on every run holding it, in each kind's terms (DCGM a failed "
    "test, NCCL a tenth of its expected figure, node-health an ECC error, nvbandwidth and RDMA "
    "rails a tenth of their floor, link counters a port's link down, burn-in GPU 0 a tenth of its "
    "floor, an RDMA pair a rail at a tenth of its floor); or every run across the "
    "link between two leaves of the site's inventory.",
)
@click.option(
    "--period",
    is_flag=True,
    help="Rehearse one period of the site's readiness.periodic instead of the one-shot plan: "
    "its CronJobs on the real CronJob controller, fired at the next minute (the rehearsal's "
    "one change) and suspended after their first Job, the period collected with collect "
    "--period. A site without readiness.periodic is refused (NVC786, exit 2).",
)
def rehearse(
    site: Path,
    fmt: str,
    speed: float,
    timeout_s: float,
    keep: Path | None,
    fail: str | None,
    period: bool,
) -> None:
    """Rehearse a trainer-mode site on the real Kueue, JobSet, Trainer and kube-scheduler.

    The site is rendered into a scratch folder, a control plane of its own is started with
    kwok playing the site's nodes (`make twin` builds them; docs/design/0019-twin.md), and
    its layers are applied step by step as its GitOps engine would, pods completing after
    their planned durations divided by --speed. Per step: planned against observed order,
    admissions, concurrency and placement. Exit 0 when every run was admitted and finished
    in the plan's order, 1 when not, 2 on bad input or when the twin cannot run. No GPUs,
    no network: placement, order, gating and admission only. Everything it starts ends
    with it, Ctrl-C and SIGTERM included; nothing is written outside the scratch folder.

    At the end each pod serves the log its run would print (its test kind's log maker: the
    physics model's and the catalog's expected figures; --fail makes a node's or a link's
    fail), `collect` reads them from the twin as `collect --context` reads a cluster,
    archives them into the scratch folder and prints the verdicts: exit 0 only when
    everything ran as planned and passed. A site naming a test of a kind without a log
    maker is refused (exit 2) before the twin starts.

    With --period, one period of readiness.periodic instead (docs/design/0021-periodic.md):
    the Namespaces, the queues layer and the periodic layer applied, each CronJob's
    schedule set to fire at the next minute (the one change; each is suspended once its
    first Job exists), the controller's Jobs admitted by Kueue at the periodic priority,
    kwok completing their pods, and collect --period's own code judging the period from
    the twin: exit 0 only when every CronJob's Job was created, admitted at that priority
    and finished, and the period passes; 1 otherwise; 2 for a site without
    readiness.periodic (NVC786) or bad input. --fail NODE fails the node in the period.
    """
    try:
        from nvcregen.rehearse.controlplane import ControlPlaneError
        from nvcregen.rehearse.failing import Failing, failing
        from nvcregen.rehearse.locate import missing
        from nvcregen.rehearse.nodes import site_nodes
        from nvcregen.rehearse.prepare import NotRehearsableError, prepare
        from nvcregen.rehearse.printer import Printer
        from nvcregen.rehearse.rehearsal import Settings
        from nvcregen.rehearse.report import Rehearsal
    except ImportError as exc:  # cryptography (the twin's certificates) missing
        _fail(f"rehearse needs {exc.name} (pip install 'nvcregen[rehearse]')")
        return
    if keep is not None and keep.exists() and any(keep.iterdir()):
        _fail(f"--keep {keep}: not an empty folder")
    previous = {s: signal.signal(s, _stop_on_signal) for s in _SIGNALS}
    try:
        with _scratch(keep) as scratch:
            prepared = prepare(site, Path.cwd(), scratch, period=period)
            if isinstance(prepared, list):
                print_diagnostics(prepared, fmt, wrote="nothing rehearsed")
                sys.exit(ExitCode.INVALID)  # not exit_now: the scratch folder goes first
            nodes = [n.name for n in site_nodes(prepared.pools)]
            fails = failing(fail, prepared.pools, nodes)
            if not isinstance(fails, Failing):
                _fail(fails)
                return
            reason = missing()
            if reason:
                _fail(reason)
            settings = Settings(speed=speed, timeout_s=timeout_s)
            plan = prepared.plan
            printer = Printer(plan.units, plan.catalog, fails.nodes, fails.links, fails.leaves)
            rehearsed = _run(site, prepared, printer, settings, scratch, period=period)
    except NotRehearsableError as exc:
        _fail(str(exc))
        return
    except ControlPlaneError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _fail(f"the twin did not start: {first} (--keep DIR keeps its logs)")
        return
    except KeyboardInterrupt as exc:
        click.echo(
            f"nvcregen: rehearse stopped ({exc or 'SIGINT'}); everything it started ended", err=True
        )
        sys.exit(130)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if isinstance(rehearsed, Rehearsal):
        _report(rehearsed, fmt)
    else:
        _report_period(rehearsed, fmt)


def _report(rehearsal: Rehearsal, fmt: str) -> None:
    """Print the rehearsal and exit by it; the reports are built once for both."""
    from nvcregen.rehearse.report import exit_code, step_reports, to_json, to_text

    reports = step_reports(rehearsal)
    if fmt == "json":
        click.echo(json.dumps(to_json(rehearsal, reports), indent=2))
    else:
        click.echo(to_text(rehearsal, reports), nl=False)
    exit_now(exit_code(reports, rehearsal.collected))


def _collected(site: Path, out: Path, kubeconfig: Path, period: str | None) -> Collected:
    """`collect --context` on the twin (its kubeconfig), archiving under `out`.

    `period`: `collect --period`'s, one period of readiness.periodic (None: the one-shot
    plan).
    """
    from nvcregen.collect.collector import collect
    from nvcregen.collect.model import CollectError, CollectOptions
    from nvcregen.collect.output import render_text
    from nvcregen.rehearse.report import Collected

    options = CollectOptions(str(site), out, Path.cwd(), kubeconfig=kubeconfig, period=period)
    try:
        outcome = collect(options)
    except CollectError as exc:
        return Collected(error=f"collect: {exc}")
    archive = str(outcome.archive.path)
    if outcome.exit_code == ExitCode.INVALID:
        problems = "; ".join(outcome.archive.problems)
        return Collected(archive=archive, error=f"the archive did not verify: {problems}")
    nodes = tuple((n.node, str(n.status)) for n in outcome.verdicts.nodes)
    lines = tuple(render_text(outcome).splitlines())
    return Collected(str(outcome.verdicts.word), nodes, archive, lines)


def _run(
    site: Path,
    prepared: Prepared,
    printer: Printer,
    settings: Settings,
    scratch: Path,
    *,
    period: bool,
) -> Rehearsal | PeriodRehearsal:
    """The rehearsal of the one-shot plan, or with `period` of one period."""
    from nvcregen.rehearse.locate import builds
    from nvcregen.rehearse.rehearsal import rehearse as run_rehearsal

    if period:
        return _rehearse_period(site, prepared, printer, settings, scratch)
    return run_rehearsal(
        prepared.objects,
        prepared.plan.facts,
        prepared.view,
        prepared.pools,
        builds(),
        scratch / "twin",
        settings,
        logs=printer,
        collect=functools.partial(_collected, site, scratch / "results", period=None),
    )


def _rehearse_period(
    site: Path, prepared: Prepared, printer: Printer, settings: Settings, scratch: Path
) -> PeriodRehearsal:
    """One period of the site's readiness.periodic on the twin (`rehearse/periodrun.py`)."""
    from nvcregen.rehearse.locate import builds
    from nvcregen.rehearse.period import period_plan
    from nvcregen.rehearse.periodrun import rehearse_period

    expected = {key: timing.expected_ms for key, timing in prepared.plan.facts.timings.items()}
    return rehearse_period(
        prepared.plan.name,
        prepared.objects,
        period_plan(prepared.objects, expected),
        prepared.pools,
        builds(),
        scratch / "twin",
        settings,
        printer,
        lambda kubeconfig, period: _collected(site, scratch / "results", kubeconfig, period),
    )


def _report_period(rehearsed: PeriodRehearsal, fmt: str) -> None:
    """Print a period's rehearsal and exit by it."""
    from nvcregen.rehearse.periodreport import exit_code, to_json, to_text

    if fmt == "json":
        click.echo(json.dumps(to_json(rehearsed), indent=2))
    else:
        click.echo(to_text(rehearsed), nl=False)
    exit_now(exit_code(rehearsed))
