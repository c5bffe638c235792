"""What a collection is asked to do, what it produced, and why it could not be done.

Shared by `collector.py` (NVCRE mode), `trainer.py` and `podlogs.py` (trainer mode), so
none of them imports another for its types.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.client import DeleteOutcome, PageHook
from nvcregen.collect.requests import PAGE_SIZE
from nvcregen.core.errors import Diagnostic, ExitCode
from nvcregen.plan.resolved import Plan
from nvcregen.results.archive import Written
from nvcregen.results.archivefiles import SiteFile
from nvcregen.results.verdicts import Verdicts, Word


class CollectError(Exception):
    """Nothing could be collected; `diagnostics` (site errors) or the message say why."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics = list(diagnostics)


@dataclass(frozen=True)
class CollectOptions:
    """What `nvcregen collect` was asked to do (exactly one of `context`/`from_dir` is used).

    Attributes:
        site: A site file, or a site name found as `sites/<name>.yaml`.
        out_dir: Where archives go: `<out_dir>/<site>/<run-id>/`.
        root: The project folder (for `sites/` and file names in provenance).
        context: The kubeconfig context to read (None: its current context), unless
            `from_dir` is given.
        kubeconfig: The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
        from_dir: A folder of exported objects, instead of a cluster.
        reclaim: Delete the site's readiness objects once the archive verified.
        sign_key: An Ed25519 private key (PEM) to sign the archive with (`signing.py`).
        policy: Retries, timeouts and restarts of API calls.
        page_size: Objects per LIST page.
        on_page: Progress callback, after each page read.
        sleep: How to wait between retries (tests pass a recorder).
        period: One period of `readiness.periodic` to archive on its own: its Job's name,
            or `latest` (`collect/period.py`); None for the one-shot plan.

    """

    site: str
    out_dir: Path = Path("results")
    root: Path = Path()
    context: str | None = None
    kubeconfig: Path | None = None
    from_dir: Path | None = None
    reclaim: bool = False
    sign_key: Path | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    page_size: int = PAGE_SIZE
    on_page: PageHook | None = None
    sleep: Callable[[float], None] = time.sleep
    period: str | None = None


@dataclass(frozen=True)
class CollectOutcome:
    """What a collection produced."""

    site: str
    archive: Written
    verdicts: Verdicts
    deleted: tuple[DeleteOutcome, ...] = ()
    reclaim_problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    signature: str = ""

    @property
    def exit_code(self) -> ExitCode:
        """2 when the archive did not verify or a reclaim fell short; 1 on a non-pass verdict.

        `ExitCode.DRIFT` is exit status 1 for every command: here, a verdict that is not
        `pass`.
        """
        if not self.archive.verified or self.reclaim_problems:
            return ExitCode.INVALID
        return ExitCode.OK if self.verdicts.word is Word.PASS else ExitCode.DRIFT


@dataclass(frozen=True)
class LoadedSite:
    """A valid site's plan (its inventory compared with the live nodes) and its file."""

    plan: Plan
    file: SiteFile
