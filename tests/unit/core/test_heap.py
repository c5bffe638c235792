"""The cyclic collector is paused for a compiling command, and restored as it was after."""

from __future__ import annotations

import gc

import click
import pytest
from click.testing import CliRunner

from nvcregen import cli
from nvcregen.commands import common
from nvcregen.commands.common import COMPILING, STANDALONE, pause_collector
from nvcregen.core.heap import collection_paused


def test_the_collector_is_paused_only_meanwhile() -> None:
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled(), "a collector paused by the caller stays paused"
    finally:
        gc.enable()


def test_a_compiling_command_runs_with_the_collector_paused_and_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    @cli.main.command("probe-heap")
    def probe() -> None:
        seen.append(gc.isenabled())
        raise SystemExit(3)

    try:
        assert CliRunner().invoke(cli.main, ["probe-heap"]).exit_code == 3
        monkeypatch.setattr(common, "COMPILING", frozenset({"probe-heap"}))
        assert CliRunner().invoke(cli.main, ["probe-heap"]).exit_code == 3
    finally:
        cli.main.commands.pop("probe-heap")
    # Not compiling (a cluster's API errors leave cycles): left on; compiling: paused.
    assert seen == [True, False]
    assert gc.isenabled(), "a command that exits must not leave the collector paused"


def test_run_as_the_process_the_collector_stays_paused_to_the_end() -> None:
    assert {"render", "check", "plan"} <= COMPILING
    assert not {"collect", "quarantine", "inventory"} & COMPILING
    context = click.Context(cli.main, obj=STANDALONE)
    context.invoked_subcommand = "render"
    try:
        with context:
            pause_collector(context)
            assert not gc.isenabled()
        assert not gc.isenabled(), "the process ends with the command: nothing to restore"
    finally:
        gc.enable()
    with click.Context(cli.main, obj=None) as in_process:
        in_process.invoked_subcommand = "plan"
        pause_collector(in_process)
        assert not gc.isenabled()
    assert gc.isenabled()
