"""Shell completion for arguments click cannot guess: site files, catalog names.

Enable it with `eval "$(_NVCREGEN_COMPLETE=bash_source nvcregen)"` (zsh: `zsh_source`,
fish: `fish_source`); see README.md. This module is imported when the CLI starts, so it
imports nothing heavy at module level: the catalog is loaded only while completing.
"""

from __future__ import annotations

from pathlib import Path

import click
from click.shell_completion import CompletionItem

SITE_SUFFIXES = (".yaml", ".yml")


def complete_sites(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Complete a site argument from `sites/*.yaml`, leaving out those already given.

    When no site file matches (a path elsewhere), the shell completes file names.
    """
    root = Path.cwd()
    given = {Path(p).as_posix() for p in ctx.params.get(param.name or "", ()) or ()}
    folder = root / "sites"
    names = sorted(
        f"sites/{p.name}"
        for p in (folder.iterdir() if folder.is_dir() else ())
        if p.suffix in SITE_SUFFIXES and p.is_file()
    )
    matches = [n for n in names if n.startswith(incomplete) and n not in given]
    if matches:
        return [CompletionItem(n) for n in matches]
    return [CompletionItem(incomplete, type="file")]


def complete_models(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Complete a GPU model from the catalog's hardware entries."""
    del ctx, param
    from nvcregen.catalog.load import load_catalog

    models = sorted(h.model for h in load_catalog().hardware.values())
    wanted = incomplete.lower()
    return [CompletionItem(m) for m in models if m.lower().startswith(wanted)]


def complete_catalog_names(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Complete any catalog entry name (of `--kind`, when given)."""
    del param
    from nvcregen.catalog.browse import entry_names

    kind = ctx.params.get("kind")
    return [
        CompletionItem(name, help=entry_kind)
        for entry_kind, name in entry_names(kind)
        if name.startswith(incomplete.lower())
    ]
