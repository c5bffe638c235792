"""An RDMA pair's two logs judged together (issue #36, item 2): rails name both nodes + HCA.

The perftest output of each client rail is the public H200 GPUDirect sample (140.40 Gb/s
at 8 MiB, tests/fixtures/captures/perftest/PROVENANCE.md); the markers are the scripts'.
"""

from __future__ import annotations

from dataclasses import replace

from rdmasamples import FAILED, H200, HCAS
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, of_kind, without_packing

from nvcregen.fabric.inventory import Inventory, InventoryNode, SwitchPort
from nvcregen.kinds.rdmapair import codes as pair_codes
from nvcregen.kinds.rdmapair.kind import KIND as RDMAPAIR
from nvcregen.kinds.rdmapair.logs import read_pair, role_of, sides
from nvcregen.plan.model import TestUnit
from nvcregen.plan.resolve import plan
from nvcregen.results.kindlogs import Side
from nvcregen.results.logrecords import RunLog
from nvcregen.results.logruns import assemble_log_runs
from nvcregen.results.models import Finality, RunState
from nvcregen.results.nodes import judge_nodes
from nvcregen.retest.pairs import plan_retest

TWO_NODE = "tests: [nccl-all-reduce, nccl-all-gather, nccl-alltoall, nccl-all-reduce-tcp]"
TEXT = (
    without_packing(EXAMPLE.read_text())
    .replace(TWO_NODE, "tests: [rdma-rails-pair]")
    .replace("nodes: [node-a, node-b]", "nodes: [node-a, node-b, node-c, node-d]")
)
START = "start=2026-12-06T09:19:12Z"


def pair_unit(speed: str = "145Gb/s", floor: float = 0.95) -> TestUnit:
    site, _ = parse(TEXT.replace("speed: 200Gb/s", f"speed: {speed}"))
    unit = next(u for u in plan(site, catalog()) if u.test.name == "rdma-rails-pair")
    rdma = RDMAPAIR.block(unit.test).model_copy(update={"floor": floor})
    return replace(unit, test=unit.test.model_copy(update={"rdmapair": rdma}))


def client_log(
    node: str = "node-a", body: str | None = None, skip: str = "", run: str = "p-r1-g0"
) -> str:
    text = f"@@nvcregen-rdma-client begin node={node} pod={run}-launcher-0-0-x1 {START}\n"
    for hca in HCAS:
        if hca == skip:
            continue
        rail = (body if body is not None else H200.read_text()).replace("mlx5_3", hca)
        text += f"@@nvcregen-rdma rail begin hca={hca} gpu=0 numa=0\n{rail}"
        text += f"@@nvcregen-rdma rail end hca={hca} rc=0\n"
    return text + "@@nvcregen-rdma end rc=0\n"


def server_log(node: str = "node-b", failed: str = "", run: str = "p-r1-g0") -> str:
    text = f"@@nvcregen-rdma-server begin node={node} pod={run}-node-0-0-x2 {START}\n"
    for hca in HCAS:
        rc = 1 if hca == failed else 0
        text += f"@@nvcregen-rdma rail begin hca={hca} gpu=0 numa=0\n"
        text += "Couldn't listen to port\n" if rc else " RDMA_Write BW Test\n"
        text += f"@@nvcregen-rdma rail end hca={hca} rc={rc}\n"
    return text + "@@nvcregen-rdma end rc=0\n"


BASE = {"path": "logs/nvcre/p-r1-g0.log", "run": "p-r1-g0", "nodes": ("node-a", "node-b")}
CLIENT = "logs/nvcre/p-r1-g0.log"
SERVER = "logs/nvcre/p-r1-g0-node-0-0-x2.log"


def judged(client: str | None, server: str | None, unit: TestUnit | None = None) -> dict:  # type: ignore[type-arg]
    sides_ = (Side(CLIENT, client) if client else None, Side(SERVER, server) if server else None)
    return read_pair(*sides_, BASE, unit or pair_unit())


def test_every_rail_of_the_pair_above_its_floor_passes() -> None:
    record = judged(client_log(), server_log())
    assert (record["status"], record["errors"], record["hosts"]) == ("ok", (), ("node-a", "node-b"))
    either_way = read_pair(Side(CLIENT, client_log("node-b")), Side(SERVER, server_log("node-a")),
                           BASE, pair_unit())  # fmt: skip
    assert either_way["status"] == "ok"  # JobSet puts the launcher on either node of the pair


def test_a_rail_below_its_floor_names_both_nodes_and_the_hca() -> None:
    at = judged(client_log(), server_log(), pair_unit("280.8Gb/s", 0.5))
    assert at["status"] == "ok"  # 0.5 x 280.8 = 140.4 exactly: at the floor passes
    below = judged(client_log(), server_log(), pair_unit("280.8Gb/s", 0.5001))
    assert below["status"] == "failed" and len(below["errors"]) == 8
    assert below["errors"][3] == (
        "NVC832: node-a -> node-b mlx5_3: 140.40 Gb/s at 8MiB, below the floor 140.428 Gb/s "
        "(0.5001 of 280.8 Gb/s)"
    )
    above = judged(client_log(), server_log(), pair_unit("140Gb/s", 0.5))
    assert above["errors"][0].startswith("NVC830: node-a -> node-b mlx5_0: 140.40 Gb/s")


def test_a_failed_or_missing_rail_on_either_side_fails_the_pair() -> None:
    record = judged(client_log(skip="mlx5_7"), server_log(failed="mlx5_2"))
    assert record["status"] == "failed"
    assert record["errors"] == (
        "node-a -> node-b mlx5_2: the server failed (exit 1): Couldn't listen to port",
        "node-a -> node-b mlx5_7: no rail measured (the client's log has no section)",
    )
    failed = judged(client_log(body=FAILED.read_text()), server_log())
    assert failed["errors"][0].startswith("node-a -> node-b mlx5_0: failed: line 41: Completion")
    no_server_rail = server_log().replace("hca=mlx5_4 ", "hca=mlx5_9 ")
    assert judged(client_log(), no_server_rail)["errors"] == (
        "node-a -> node-b mlx5_4: the server's log has no section of it",
    )


def test_one_side_without_the_other_is_no_evidence_nvc774() -> None:
    alone = judged(client_log(), None)
    assert alone["status"] == "no-data"
    assert alone["errors"] == (
        f"{pair_codes.NVC774.code}: {CLIENT}: the client's log of p-r1-g0 without its server's: "
        "what one side printed is no evidence without the other's",
    )
    server_only = judged(None, server_log())
    assert (
        server_only["status"] == "no-data"
        and "server's log of p-r1-g0 without its client's" in (server_only["errors"][0])
    )


def test_logs_of_another_run_or_the_wrong_side_are_foreign_nvc730() -> None:
    other = judged(client_log("node-c"), server_log())
    assert other["status"] == "foreign" and "NVC730" in other["errors"][0]
    assert "from node node-c" in other["errors"][0]
    both_client = judged(
        client_log(), client_log("node-b")
    )  # a client log passed off as a server's
    assert both_client["status"] == "foreign"
    assert "no `@@nvcregen-rdma-server begin node=...` line" in both_client["errors"][0]
    same = judged(client_log(), server_log("node-a"))
    assert same["status"] == "foreign"
    assert "the client ran on node-a and the server on node-a" in same["errors"][0]


def test_a_log_of_another_round_of_the_same_pair_is_foreign_nvc730() -> None:
    """Found by review: both rounds of a pair run on the same two nodes, so the nodes alone
    let round 2's logs stand for round 1's; the pod must be one of the run's own."""
    other_round = judged(client_log(run="p-r2-g0"), server_log())
    assert other_round["status"] == "foreign"
    assert other_round["errors"][0] == (
        f"NVC730: {CLIENT}:1: the log is from pod p-r2-g0-launcher-0-0-x1, not the client pod"
        " of p-r1-g0: another run's evidence"
    )
    assert judged(client_log(), server_log(run="p-r2-g0"))["status"] == "foreign"
    swapped = server_log().replace("pod=p-r1-g0-node-0-0-x2", "pod=p-r1-g0-launcher-0-0-x9")
    assert "not the server pod of p-r1-g0" in judged(client_log(), swapped)["errors"][0]


def test_sides_by_pod_name_and_a_second_log_of_a_side_is_read_for_neither() -> None:
    assert role_of("p-r1-g0-node-0-0-x2", "p-r1-g0") == "server"
    assert role_of("p-r1-g0", "p-r1-g0") == role_of("p-r1-g0-launcher-0-0-x", "p-r1-g0") == "client"
    a, b, c = Side("a", "1"), Side("b", "2"), Side("c", "3")
    client, server, problems = sides(
        [("p-r1-g0", "a", a), ("p-r1-g0-node-0-0-x", "b", b), ("p-r1-g0-node-0-0-y", "c", c)],
        "p-r1-g0",
    )
    assert (client, server) == (a, None)
    assert problems == ["c: a second server's log of p-r1-g0 beside b: neither is read"]


def _logs(fail_first: bool) -> tuple[list[RunLog], TestUnit]:
    site, _ = parse(TEXT)
    unit = next(u for u in plan(site, catalog()) if u.test.name == "rdma-rails-pair")
    jobs = [j["metadata"]["name"] for j in of_kind(compiled(TEXT), "TrainJob", "rdma-rails-pair")]
    logs = []
    for name in (j for j in jobs if "-r1-" in j):
        client, server = ("node-a", "node-b") if name.endswith("-g0") else ("node-c", "node-d")
        body = H200.read_text() if fail_first and name.endswith("-g0") else None
        fast = H200.read_text().replace("140.40", "195.00")  # 200 Gb/s NICs: 190 Gb/s floor
        text = client_log(client, body or fast, run=name)
        logs.append(RunLog("nvcre", name, text.encode(), client))
        pod = f"{name}-node-0-0-x2"
        logs.append(RunLog("nvcre", pod, server_log(server, run=name).encode(), server))
    return logs, unit


def test_collect_judges_each_pair_and_the_failing_pairs_nodes_are_suspects() -> None:
    logs, unit = _logs(fail_first=True)
    site, _ = parse(TEXT)
    results = assemble_log_runs(site.metadata.name, [unit], 1, logs, [])
    (run,) = results.runs.runs
    assert run.state == RunState.FAILED and not run.problems
    assert [(m.group, m.nodes, m.finality) for m in run.bandwidth] == [
        ("g0", ("node-a", "node-b"), Finality.NOT_EVALUATED),
        ("g1", ("node-c", "node-d"), Finality.FINAL),
    ]
    assert run.bandwidth[0].reason.startswith(
        "RailFailed: NVC832: node-a -> node-b mlx5_0: 140.40 Gb/s at 8MiB, below the floor 190 Gb/s"
    )
    verdicts = {v.node: v for v in judge_nodes(site, results.runs, {}, 1)}
    assert [verdicts[n].status for n in ("node-a", "node-b", "node-c", "node-d")] == [
        "suspect", "suspect", "cleared", "cleared",
    ]  # fmt: skip
    assert (
        "with node-b: round 1: RailFailed: NVC832: node-a -> node-b mlx5_0"
        in (verdicts["node-a"].reasons[0])
    )
    retest = plan_retest(list(verdicts.values()), dict.fromkeys(verdicts, "h20"))
    paired = {(p.suspect, p.cleared) for b in retest.batches for p in b.pairs}
    assert {s for s, _ in paired} == {"node-a", "node-b"}  # each beside a cleared partner
    assert {c for _, c in paired} <= {"node-c", "node-d"}


def test_collect_without_a_pairs_server_log_leaves_it_untested() -> None:
    logs, unit = _logs(fail_first=False)
    site, _ = parse(TEXT)
    kept = [g for g in logs if not (g.name.endswith("-node-0-0-x2") and "-g0-" in g.name)]
    results = assemble_log_runs(site.metadata.name, [unit], 1, kept, [])
    (run,) = results.runs.runs
    assert run.state == RunState.IN_PROGRESS
    assert run.bandwidth[0].reason.startswith(f"OneSided: {pair_codes.NVC774.code}: ")
    verdicts = {v.node: v for v in judge_nodes(site, results.runs, {}, 1)}
    assert verdicts["node-a"].status == "untested" and verdicts["node-c"].status == "cleared"
    passed = assemble_log_runs(site.metadata.name, [unit], 1, logs, []).runs.runs[0]
    assert passed.state == RunState.SUCCEEDED


def test_a_pair_log_read_on_its_own_is_one_side_no_evidence() -> None:
    from nvcregen.results import logruns
    from nvcregen.results.logplace import Placed

    unit = pair_unit()
    placed = Placed(unit, "p-r1-g0", 1, 0, ("node-a", "node-b"))
    for name, text, side in (("p-r1-g0", client_log(), "client"),
                             ("p-r1-g0-node-0-0-x2", server_log(), "server")):  # fmt: skip
        read = logruns._read(RunLog("nvcre", name, text.encode()), placed, failed=False)
        assert read.record.status == "no-data" and read.measurement is None
        assert f"the {side}'s log of p-r1-g0 without" in read.record.errors[0]


def test_a_failing_pair_rail_names_both_ends_switch_ports_where_known() -> None:
    def cabled(**nodes: str) -> TestUnit:
        unit = pair_unit("280.8Gb/s", 0.5001)
        inventory = Inventory("nodes.yaml", {
            node: InventoryNode(node, cabling={"mlx5_3": SwitchPort(f"leaf-{node[-1]}", port)})
            for node, port in nodes.items()
        })  # fmt: skip
        return replace(unit, pool=replace(unit.pool, inventory=inventory))

    unit = cabled(**{"node-a": "Ethernet1/3", "node-b": "Ethernet1/4"})
    record = judged(client_log(), server_log(failed="mlx5_3"), unit)
    ends = " (node-a: leaf-a Ethernet1/3; node-b: leaf-b Ethernet1/4)"
    assert (
        f"NVC832: node-a -> node-b mlx5_3{ends}: 140.40 Gb/s at 8MiB, below" in record["errors"][3]
    )
    assert record["errors"][4] == (
        f"node-a -> node-b mlx5_3{ends}: the server failed (exit 1): Couldn't listen to port"
    )
    assert record["errors"][2].startswith("NVC832: node-a -> node-b mlx5_2: 140.40")  # unmapped
    one = judged(client_log(skip="mlx5_3"), server_log(), cabled(**{"node-b": "Ethernet1/4"}))
    assert (
        "node-a -> node-b mlx5_3 (node-b: leaf-b Ethernet1/4): no rail measured"
        " (the client's log has no section)"
    ) in one["errors"]
    plain = judged(client_log(), server_log(failed="mlx5_3"), pair_unit("280.8Gb/s", 0.5001))
    assert plain["errors"][4] == (
        "node-a -> node-b mlx5_3: the server failed (exit 1): Couldn't listen to port"
    )
