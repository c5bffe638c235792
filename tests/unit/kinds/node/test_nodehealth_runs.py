"""How complete a node-health run is, whatever NVCRE's own objects say (issue #23).

An exit status is no reading of a node's health: with no log, or with fewer logs than the
pool has nodes, the run never passes.
"""

from __future__ import annotations

from nodehealthlogs import EXAMPLES, health_log

from nvcregen.catalog.load import load_catalog
from nvcregen.kinds.node.kind import KIND as NODE
from nvcregen.kinds.node.nvcreruns import judge_node_health_logs
from nvcregen.plan.model import TestUnit as PlannedUnit
from nvcregen.results.logrecords import RunLog
from nvcregen.results.models import RunState
from nvcregen.results.runs import RunResult, RunSet
from nvcregen.validate.site import load_site

NAMED = "      nodes: [h200-a, h200-b, h200-c]\n"


def units(text: str) -> list[PlannedUnit]:
    loaded = load_site(text.encode(), "site.yaml", load_catalog())
    assert loaded.plan is not None, [d.message for d in loaded.diagnostics]
    return list(loaded.plan.units)


def judged(text: str, nodes: tuple[str, ...]) -> RunResult:
    planned = units(text)
    unit = next(u for u in planned if NODE.block_or_none(u.test) is not None)
    run = RunResult(
        stage=unit.stage.name,
        scope=unit.stage.scope,
        test=unit.test.name,
        state=RunState.SUCCEEDED,  # NVCRE: every job exited 0
    )
    logs = [RunLog("nvcre", f"node-health-{n}", health_log(n).encode()) for n in nodes]
    found, _ = judge_node_health_logs(planned, RunSet((run,), ()), logs)
    return found.runs[0]


def site(pool_nodes: str) -> str:
    text = (EXAMPLES / "h200-nvcre.yaml").read_text()
    assert NAMED in text
    return text.replace(NAMED, pool_nodes)


def test_no_log_is_no_pass_whatever_nvcre_says() -> None:
    run = judged(site(NAMED), ())
    assert (run.state, run.reason) == (RunState.IN_PROGRESS, "LogsMissing")


def test_every_named_node_logged_passes_and_one_short_does_not() -> None:
    assert judged(site(NAMED), ("h200-a", "h200-b", "h200-c")).state is RunState.SUCCEEDED
    short = judged(site(NAMED), ("h200-a", "h200-b"))
    assert short.state is RunState.IN_PROGRESS
    assert "no finished node-health log of h200-c" in short.message


def test_a_selector_pool_is_complete_at_its_node_count_and_not_one_below() -> None:
    pool = "      selector: {pool: h200}\n      nodeCount: 3\n"
    assert judged(site(pool), ("h200-a", "h200-b", "h200-c")).state is RunState.SUCCEEDED
    short = judged(site(pool), ("h200-a", "h200-b"))
    assert short.state is RunState.IN_PROGRESS
    assert "logs of 2 of the pool's 3 nodes" in short.message
