"""The cyclic collector is paused for a command, and restored as it was after."""

from __future__ import annotations

import gc

import click
from click.testing import CliRunner

from nvcregen import cli
from nvcregen.commands.common import STANDALONE, pause_collector
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


def test_every_command_runs_with_the_collector_paused_and_restores_it() -> None:
    seen: list[bool] = []

    @cli.main.command("probe-heap")
    def probe() -> None:
        seen.append(gc.isenabled())
        raise SystemExit(3)

    try:
        result = CliRunner().invoke(cli.main, ["probe-heap"])
    finally:
        cli.main.commands.pop("probe-heap")
    assert result.exit_code == 3
    assert seen == [False]
    assert gc.isenabled(), "a command that exits must not leave the collector paused"


def test_run_as_the_process_the_collector_stays_paused_to_the_end() -> None:
    context = click.Context(cli.main, obj=STANDALONE)
    try:
        with context:
            pause_collector(context)
            assert not gc.isenabled()
        assert not gc.isenabled(), "the process ends with the command: nothing to restore"
    finally:
        gc.enable()
    with click.Context(cli.main, obj=None) as in_process:
        pause_collector(in_process)
        assert not gc.isenabled()
    assert gc.isenabled()
