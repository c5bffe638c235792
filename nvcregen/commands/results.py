"""Commands that read results back: `collect`, `ingest`, `report`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nvcregen.commands.common import FORMAT, KUBECONFIG, print_diagnostics
from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import one_line, printable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from nvcregen.core.errors import Diagnostic
    from nvcregen.ingest.kindingest import KindIngest


@click.command()
@click.option("--site", required=True, metavar="SITE", help="Site name (sites/SITE.yaml) or file.")
@click.option("--context", metavar="CTX", help="Read this kubeconfig context's cluster.")
@KUBECONFIG
@click.option(
    "--from",
    "from_dir",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    metavar="DIR",
    help="Read exported objects (YAML or JSON, lists or single objects) from this folder.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("results"),
    show_default=True,
    help="Archives go to OUT/<site>/<run-id>/.",
)
@click.option(
    "--reclaim",
    is_flag=True,
    help="Once the archive verified, delete the site's Certifications and WorkloadRuns.",
)
@click.option(
    "--sign-key",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KEY",
    help="Sign the archive with this Ed25519 private key (PEM): attestation.dsse.json, a"
    " DSSE envelope of an in-toto Statement of every file (`nvcregen verify --key`).",
)
@click.option(
    "--period",
    metavar="JOB",
    help="Archive one period of readiness.periodic on its own: its Job's name"
    " (<cronjob>-<minutes>), or `latest`.",
)
@FORMAT
def collect(
    site: str,
    context: str | None,
    kubeconfig: Path | None,
    from_dir: Path | None,
    out_dir: Path,
    reclaim: bool,
    sign_key: Path | None,
    period: str | None,
    fmt: str,
) -> None:
    """Archive a site's results with verdicts: 0 all pass, 1 fail or incomplete, 2 error."""
    from nvcregen.collect.collector import collect as run_collect
    from nvcregen.collect.model import CollectError, CollectOptions
    from nvcregen.collect.output import TerminalProgress, render_json, render_text, summary_line

    if (context is None) == (from_dir is None):
        raise click.UsageError("give exactly one of --context CTX or --from DIR")
    if reclaim and from_dir is not None:
        raise click.UsageError("--reclaim deletes from a cluster: it needs --context")
    if kubeconfig is not None and context is None:
        raise click.UsageError("--kubeconfig needs --context CTX")
    progress = TerminalProgress() if sys.stderr.isatty() and fmt == "text" else None
    options = CollectOptions(
        site,
        out_dir,
        Path.cwd(),
        context,
        kubeconfig,
        from_dir,
        reclaim,
        sign_key=sign_key,
        on_page=progress,
        period=period,
    )
    try:
        outcome = run_collect(options)
    except CollectError as exc:
        if exc.diagnostics:
            print_diagnostics(exc.diagnostics, fmt, wrote="nothing collected")
        click.echo(printable(f"nvcregen: {exc}"), err=True)  # names from the export
        sys.exit(ExitCode.INVALID)
    finally:
        if progress is not None:
            progress.close()
    text = render_json(outcome) if fmt == "json" else render_text(outcome)
    click.echo(printable(text), nl=False)  # reasons and names read from the cluster
    click.echo(summary_line(outcome), err=True, nl=False)
    sys.exit(outcome.exit_code)


@click.command()
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("report"),
    show_default=True,
    help="Write OUT/index.html and OUT/summary.md.",
)
@click.option(
    "--sanitize",
    is_flag=True,
    help="Replace addresses, host names and private registries with placeholders; also"
    " write the sanitized bandwidth.csv and summary.json.",
)
def report(results_dir: Path, out_dir: Path, sanitize: bool) -> None:
    """Page and summary of a run (RESULTS_DIR, or a site folder's newest): 0 written, 2 refused."""
    from nvcregen.report.folder import ReportError
    from nvcregen.report.writer import write_report

    try:
        written = write_report(results_dir, out_dir, sanitize=sanitize)
    except ReportError as exc:
        click.echo(printable(f"nvcregen: {exc}"), err=True)  # the archive is not trusted
        sys.exit(ExitCode.INVALID)
    click.echo(one_line(f"{written.site} {written.run_id}: {written.word}"))
    for line in written.evidence:  # evidence quotes the archive: a line feed forges no line
        click.echo(one_line(f"  {line}"))
    for finding in written.findings:
        click.echo(printable(f"nvcregen: {finding}"), err=True)
    click.echo(printable(f"{written.run_id}: {written.signature}"))
    for file in written.files:
        click.echo(printable(f"wrote {file}"))


@click.command()
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--key",
    "key_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="PUB",
    help="The signer's Ed25519 public key (PEM).",
)
def verify(results_dir: Path, key_file: Path) -> None:
    """Check a run (RESULTS_DIR, or a site folder's newest) is intact and signed by PUB.

    Exit 0 when every file is as signed and the signature verifies under PUB; 1 when a
    file changed, is missing or was added, the archive is unsigned or another key signed
    it; 2 when PUB cannot be used or RESULTS_DIR holds no run.
    """
    from nvcregen.report.folder import ReportError, locate
    from nvcregen.results.attestation import verify_signature
    from nvcregen.results.dsse import SigningKeyError, fingerprint, load_public_key

    try:
        public = load_public_key(key_file)
        located = locate(results_dir)
    except (SigningKeyError, ReportError) as exc:
        click.echo(printable(f"nvcregen: {exc}"), err=True)
        sys.exit(ExitCode.INVALID)
    run = located.run
    for finding in located.findings:
        click.echo(printable(f"nvcregen: {finding}"), err=True)
    keyid = fingerprint(public)
    problems = list(dict.fromkeys([*verify_signature(run, public), *located.entry.problems]))
    if problems:  # names quoted from the archive and its envelope: printed escaped
        click.echo(printable(f"{run}: NOT verified against key {keyid}"), err=True)
        for problem in problems:
            click.echo(printable(f"  - {problem}"), err=True)
        sys.exit(ExitCode.DRIFT)
    click.echo(printable(f"{run}: verified, every file as signed by key {keyid}"))


class _IngestKind(click.Choice):  # type: ignore[type-arg]
    """`ingest`'s kinds: each kind's that reads its own output (its package's `INGEST`).

    The kinds' names are asked only when `ingest` runs or prints its help
    (`ingest/kindingest.py`), so that the command line starts without loading a kind.
    """

    def __init__(self) -> None:
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        from nvcregen.ingest.kindingest import ingest_names

        return tuple(ingest_names())


@click.command()
@click.argument("kind", type=_IngestKind())
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--at", metavar="SIZE", help="Summarize only this message size, e.g. 1GiB.")
@click.option("--site", metavar="SITE", help="node: judge drift against this site's pool.")
@click.option("--pool", metavar="POOL", help="node: the pool of --site the nodes belong to.")
@click.option(
    "--model",
    metavar="MODEL",
    help="nvbandwidth, burnin: judge each GPU (and pair) against this GPU model's floors and"
    " ceilings.",
)
@click.option(
    "--order",
    metavar="FILE",
    type=click.Path(path_type=Path),
    help="nvbandwidth: `nvbandwidth -l` output naming the testcases v0.7+ waive unnamed.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Output format (markdown: node only).",
)
def ingest(
    kind: str,
    files: tuple[Path, ...],
    at: str | None,
    site: str | None,
    pool: str | None,
    model: str | None,
    order: Path | None,
    fmt: str,
) -> None:
    """Read nccl-tests, dcgmi diag, nvidia-smi, nvbandwidth, perftest, link counters, burn-in."""
    from nvcregen.ingest.kindingest import ingest_names

    own = ingest_names()
    reading = own.get(kind)
    if reading is None:  # the choice was checked against the same kinds: a kind gone since
        raise click.UsageError(f"no kind reads `ingest {kind}` output")
    given = {"order": order, "site": site, "pool": pool, "at": at}
    _ingest_own(kind, reading, files, model, order, fmt, given=given, others=own)


def _ingest_own(
    name: str,
    reading: KindIngest,
    files: tuple[Path, ...],
    model: str | None,
    order: Path | None,
    fmt: str,
    *,
    given: Mapping[str, str | Path | None],
    others: Mapping[str, KindIngest],
) -> None:
    """`ingest <name>` for a kind that reads its own output (`ingest/kindingest.py`).

    `given`: the other options by name, refused unless the kind takes them (the refusal
    names the kinds that take them, of `others`).
    """
    import json

    from nvcregen.ingest.kindingest import (
        IngestArgs,
        IngestInputError,
        IngestOptionError,
        IngestUsageError,
    )

    refused = [f"--{option}" for option in given if option not in reading.options]
    markdown = "markdown" in reading.options
    if (fmt == "markdown" and not markdown) or any(given[o[2:]] is not None for o in refused):
        parts = [*refused, *([] if markdown else ["--format markdown"])]
        named = _listed(parts)
        raise click.UsageError(f"{named} are not for it{_takers(refused, given, others)}")
    if model is not None and "model" not in reading.options:
        raise click.UsageError(f"--model is not for `ingest {name}`")
    site, pool, at = given.get("site"), given.get("pool"), given.get("at")
    args = IngestArgs(
        model,
        order,
        None if site is None else str(site),
        None if pool is None else str(pool),
        None if at is None else str(at),
    )
    try:
        result = reading.ingest(files, args)
    except IngestOptionError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.option) from exc
    except IngestUsageError as exc:
        raise click.UsageError(str(exc)) from exc
    except IngestInputError as exc:
        if exc.diagnostics:
            print_diagnostics(list(exc.diagnostics), "text", wrote="nothing read")
        click.echo(f"nvcregen: {exc}", err=True)
        sys.exit(ExitCode.INVALID)
    if fmt == "json":
        click.echo(json.dumps(result.json, indent=2))
    elif fmt == "markdown" and result.markdown is not None:
        click.echo(printable(result.markdown), nl=False)  # quoted from the files: escaped
    else:
        click.echo(printable(result.text), nl=False)  # quoted from the files: escaped
    if result.exit_code is None:
        _exit_for(result.diagnostics, result.failed, files)
        return
    if result.diagnostics:
        read = len(files) - len({d.span.file for d in result.diagnostics})
        print_diagnostics(
            list(result.diagnostics), "text", wrote=f"read {read} of {len(files)} files"
        )
    sys.exit(result.exit_code)


def _listed(parts: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)


def _takers(
    refused: Sequence[str],
    given: Mapping[str, str | Path | None],
    others: Mapping[str, KindIngest],
) -> str:
    """`: --site and --pool are for `ingest node``, for the refused options that were given."""
    by_takers: dict[tuple[str, ...], list[str]] = {}
    for option in refused:
        if given.get(option[2:]) is None:
            continue
        takers = tuple(n for n, r in others.items() if option[2:] in r.options)
        if takers:
            by_takers.setdefault(takers, []).append(option)
    said = [
        f"{_listed(options)} {'are' if len(options) > 1 else 'is'} for "
        + " or ".join(f"`ingest {n}`" for n in takers)
        for takers, options in by_takers.items()
    ]
    return f": {'; '.join(said)}" if said else ""


def _exit_for(diagnostics: Sequence[Diagnostic], failed: bool, files: tuple[Path, ...]) -> None:
    """Exit 2 when a file could not be read (its diagnostics printed), 1 when a run failed."""
    if diagnostics:
        read = len(files) - len({d.span.file for d in diagnostics})
        print_diagnostics(list(diagnostics), "text", wrote=f"read {read} of {len(files)} files")
        sys.exit(ExitCode.INVALID)
    if failed:
        sys.exit(ExitCode.DRIFT)  # a failed run is a result, not a success
