"""The burn-in and RDMA pair log makers, read back by collect's own readers (issues #34, #36).

Pure: no twin. The H100 site of `tests/kindsite.py` runs `burn-in` in its single-node
stage and `rdma-rails-pair` in its two-node stage. A burn-in log is read by
`kinds/burnin/logs.py` (DCGM's reader, each GPU judged against the model's floor and
datasheet peak); a pair run's two logs, its worker's (the servers) and its launcher's
(the client), both made through `run_pod_log` as the twin serves them, by
`kinds/rdmapair/logs.py`. Healthy passes; a failing node fails in the kind's own terms.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from test_rehearse_makers import POD, START, base, loaded, made, printer, project, unit_of

from nvcregen.collect.model import LoadedSite
from nvcregen.core import units
from nvcregen.kinds.burnin.kind import KIND as BURNIN
from nvcregen.kinds.burnin.logs import read_burnin
from nvcregen.kinds.burnin.maker import burnin_output, gpu_uuid
from nvcregen.kinds.burnin.reader import parse_burnin
from nvcregen.kinds.rdma.maker import RailSide, rail_sections, rails_of
from nvcregen.kinds.rdma.reader import parse_perftest
from nvcregen.kinds.rdmapair.kind import KIND as RDMAPAIR
from nvcregen.kinds.rdmapair.logs import read_pair
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.podlogs import run_pod_log
from nvcregen.rehearse.printer import PackPod, Section
from nvcregen.results.kindlogs import Side

__all__ = ["loaded", "project"]  # the fixtures, shared with the other makers' tests

LATER = datetime(2026, 12, 6, 9, 30, tzinfo=UTC)
H100_TARGET, H100_FLOOR, H100_PEAK = 29250.0, 0.95 * 29250, 67000.0  # catalog/tests/burn-in.yaml


# --- burn-in ---


def burnin_unit(loaded: LoadedSite, peak: float | None = None, model: str = "") -> TestUnit:
    """The site's burn-in unit, its H100 peak or its pool's model changed where given."""
    unit = unit_of(loaded, "burn-in")
    if model:
        hardware = unit.pool.hardware.model_copy(update={"model": model})
        return replace(unit, pool=replace(unit.pool, hardware=hardware))
    if peak is None:
        return unit
    block = BURNIN.block_or_none(unit.test)
    assert block is not None
    expected = [e.model_copy(update={"peak_gflops": peak}) for e in block.expectations]
    test = unit.test.model_copy(
        update={"burnin": block.model_copy(update={"expectations": expected})}
    )
    return replace(unit, test=test)


def burnin_log(loaded: LoadedSite, unit: TestUnit, failing: bool = False, round_: int = 1,
               start: datetime = START, pod: str = POD) -> Any:  # fmt: skip
    pack = PackPod("single-node", ("burn-in",), round_, ("node-a",), pod, start)
    return burnin_output(printer(loaded), unit, Section(pack, start, 720, failing))


def test_a_healthy_nodes_burn_in_holds_every_gpu_between_its_floor_and_peak(
    loaded: LoadedSite,
) -> None:
    output = made(loaded, "burn-in")
    assert output.rc == 0 and not output.exit_line
    assert output.text.startswith(
        f"@@nvcregen-burnin begin node=node-a pod={POD} start=2026-12-06T09:00:00Z\n"
        f"@@nvcregen-gpu index=0 uuid={gpu_uuid('node-a', 0)}\n"
    )
    assert output.text.endswith("nvcregen: dcgmi diag --run targeted_stress exit=0 seconds=60\n")
    unit = unit_of(loaded, "burn-in")
    record = read_burnin(output.text, base(), unit, names_itself=True)
    assert (record.status, record.errors, record.hosts) == ("ok", (), ("node-a",))
    assert record.versions == ("4.5.2",)  # the site's dcgm image
    run = parse_burnin(output.text, "log")
    assert (run.test, run.status, run.errors) == ("Targeted Stress", "ok", ())
    assert [g.gpu for g in run.gpus] == list(range(8))
    assert {g.basis for g in run.gpus} == {"average"} and {g.result for g in run.gpus} == {"Pass"}
    figures = [g.gflops or 0 for g in run.gpus]
    assert all(H100_TARGET <= f <= H100_TARGET * 1.004 for f in figures), figures
    assert min(figures) > H100_FLOOR and max(figures) < H100_PEAK
    assert dict(run.uuids) == {i: gpu_uuid("node-a", i) for i in range(8)}
    assert len(set(dict(run.uuids).values())) == 8  # one GPU, one UUID


def test_a_failing_nodes_gpu_0_peaks_at_a_tenth_of_its_floor_nvc768(loaded: LoadedSite) -> None:
    output = made(loaded, "burn-in", "node-a", "node-a")
    assert output.rc == 1  # DCGM failed GPU 0 itself: the script exits with its code
    assert output.text.endswith("nvcregen: dcgmi diag --run targeted_stress exit=1 seconds=60\n")
    assert (
        "Max stress level of 2778.8 did not reach desired stress level of 29250.0 for GPU 0"
        in output.text
    )
    record = read_burnin(output.text, base(), unit_of(loaded, "burn-in"), names_itself=True)
    assert record.status == "failed"
    assert record.errors == (
        f"node-a NVC768: GPU 0 ({gpu_uuid('node-a', 0)}): 2778.8 GFLOPS (best), under the"
        " floor 27787.5 GFLOPS",
    )  # every other GPU passed


def test_a_healthy_figure_never_passes_the_models_peak(loaded: LoadedSite) -> None:
    """A model whose peak is its target: the healthy figures stop at it, never NVC765."""
    unit = burnin_unit(loaded, peak=H100_TARGET)
    output = burnin_log(loaded, unit)
    record = read_burnin(output.text, base(), unit, names_itself=True)
    assert (record.status, record.errors) == ("ok", ())
    figures = {g.gflops for g in parse_burnin(output.text, "log").gpus}
    assert max(f or 0 for f in figures) == H100_TARGET


def test_a_model_without_burn_in_figures_reads_back_as_no_evidence(loaded: LoadedSite) -> None:
    """Such a site is refused when checked (NVC337); its log, made anyway, judges nothing."""
    unit = burnin_unit(loaded, model="A100")
    record = read_burnin(burnin_log(loaded, unit).text, base(), unit, names_itself=True)
    assert (record.status, record.errors) == (
        "no-data",
        ("no burn-in figures for A100 in the catalog",),
    )


def test_two_rounds_of_a_node_never_print_the_same_burn_in(loaded: LoadedSite) -> None:
    unit = unit_of(loaded, "burn-in")
    one = burnin_log(loaded, unit).text
    two = burnin_log(loaded, unit, round_=2, start=LATER, pod=POD.replace("-r1-", "-r2-")).text
    runs = [parse_burnin(t, "log") for t in (one, two)]
    assert [g.gflops for g in runs[0].gpus] != [g.gflops for g in runs[1].gpus]
    assert runs[0].uuids == runs[1].uuids  # the node's GPUs are the same GPUs
    same_pod = burnin_log(loaded, unit, round_=2).text  # the round alone moves the figures
    assert parse_burnin(same_pod, "log").gpus != runs[0].gpus


# --- RDMA rails between two nodes ---

RUN = "kinds-trainer-two-node-rdma-rails-pair-0a1b2c3d-r1-g0"
PAIR = ("node-a", "node-b")


def pair_run(run: str = RUN, round_: int = 1, server_log: bool = True) -> dict[str, Any]:
    """The pair test's TrainJob as rendered: its labels and its annotations."""
    labels = {"nvcregen.io/stage": "two-node", "nvcregen.io/round": str(round_),
              "nvcregen.io/test": "rdma-rails-pair"}  # fmt: skip
    notes = {"nvcregen.io/nodes": ",".join(PAIR)}
    if server_log:
        notes["nvcregen.io/server-log"] = "node"
    return {"kind": "TrainJob", "metadata": {"name": run, "labels": labels, "annotations": notes}}


def pair_logs(loaded: LoadedSite, *failing: str, client_on: str = "node-a", run: str = RUN,
              round_: int = 1, start: datetime = START) -> tuple[Side, Side]:  # fmt: skip
    """A round's client (launcher) and server (worker) logs, as the twin serves them."""
    server_on = next(n for n in PAIR if n != client_on)
    made_by, obj = printer(loaded, *failing), pair_run(run, round_)
    client_pod, server_pod = f"{run}-launcher-0-0-q7w2e", f"{run}-node-0-0-k2x9p"
    client = run_pod_log(made_by, obj, client_pod, PAIR, start, launcher=True, on=client_on)
    server = run_pod_log(made_by, obj, server_pod, PAIR, start, launcher=False, on=server_on)
    return (
        Side(f"logs/nvcre/{client_pod}.log", client, client_on),
        Side(f"logs/nvcre/{server_pod}.log", server, server_on),
    )


def pair_read(loaded: LoadedSite, client: Side, server: Side, run: str = RUN) -> dict[str, Any]:
    base_ = {"path": client.path, "run": run, "nodes": PAIR}
    return read_pair(client, server, base_, unit_of(loaded, "rdma-rails-pair", "two-node"))


def test_a_healthy_pairs_every_rail_passes_midway_between_floor_and_line_rate(
    loaded: LoadedSite,
) -> None:
    client, server = pair_logs(loaded)
    assert client.text.startswith(
        f"@@nvcregen-rdma-client begin node=node-a pod={RUN}-launcher-0-0-q7w2e"
        f" start=2026-12-06T09:00:00Z\n@@nvcregen-rdma server host={RUN}-node-0-0.{RUN}\n"
    )
    assert server.text.startswith(
        f"@@nvcregen-rdma-server begin node=node-b pod={RUN}-node-0-0-k2x9p"
        " start=2026-12-06T09:00:00Z\n@@nvcregen-rdma rail begin hca=mlx5_0 gpu=0 numa=0\n"
    )
    assert client.text.endswith("@@nvcregen-rdma end rc=0\n")
    assert server.text.endswith("@@nvcregen-rdma end rc=0\n")
    record = pair_read(loaded, client, server)
    assert (record["status"], record["errors"], record["hosts"]) == ("ok", (), PAIR)
    rail = client.text.split("hca=mlx5_3 gpu=3 numa=0\n")[1].split("@@nvcregen-rdma rail end")[0]
    (run,) = parse_perftest(rail, "rail")
    row = run.at(units.parse_size("8MiB"))
    assert row is not None and row.average_gbps == 390.0  # (0.95 x 400 + 400) / 2
    assert (run.device, run.gpu) == ("mlx5_3", "NVIDIA H100 80GB HBM3")
    assert client.text.count("@@nvcregen-rdma rail begin") == 8
    assert server.text.count("@@nvcregen-rdma rail end hca=mlx5_") == 8
    served = server.text.split("hca=mlx5_3 gpu=3 numa=0\n")[1].split("@@nvcregen-rdma rail end")[0]
    assert "* Waiting for client to connect... *" in served and "#bytes" not in served
    gids = [line for line in served.splitlines() if line.startswith(" GID: ")]
    assert gids == [" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:03:02",
                    " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:03:01"]  # fmt: skip
    mine = [line for line in rail.splitlines() if line.startswith(" GID: ")]
    assert mine == gids[::-1]  # the client's addresses are the server's, the other way round


def test_the_launcher_on_either_node_is_read_as_the_client(loaded: LoadedSite) -> None:
    client, server = pair_logs(loaded, client_on="node-b")
    assert client.text.startswith("@@nvcregen-rdma-client begin node=node-b ")
    assert server.text.startswith("@@nvcregen-rdma-server begin node=node-a ")
    record = pair_read(loaded, client, server)
    assert (record["status"], record["hosts"]) == ("ok", ("node-b", "node-a"))
    unplaced = run_pod_log(printer(loaded), pair_run(), f"{RUN}-node-0-0-k2x9p", PAIR, START,
                           launcher=False)  # fmt: skip
    assert unplaced.startswith("@@nvcregen-rdma-server begin node=node-a ")  # no node: as given


def test_a_failing_nodes_pair_runs_its_first_rail_at_a_tenth_of_the_floor(
    loaded: LoadedSite,
) -> None:
    below = (
        "NVC832: {} -> {} mlx5_0: 38.00 Gb/s at 8MiB, below the floor 380 Gb/s (0.95 of 400 Gb/s)"
    )
    for failing, client_on in (("node-a", "node-a"), ("node-a", "node-b"), ("node-b", "node-a")):
        client, server = pair_logs(loaded, failing, client_on=client_on)
        assert "nvcregen: mlx5_0 38.00 Gb/s at 8388608 B, below 380.0 Gb/s\n" in client.text
        assert client.text.endswith("@@nvcregen-rdma end rc=1\n")  # the client's script fails
        assert (
            server.text == pair_logs(loaded, client_on=client_on)[1].text
        )  # a server says nothing
        record = pair_read(loaded, client, server)
        assert record["status"] == "failed"
        assert record["errors"] == (below.format(client.pod_node, server.pod_node),)


def test_two_rounds_of_a_pair_never_print_the_same_logs(loaded: LoadedSite) -> None:
    one = pair_logs(loaded)
    later = RUN.replace("-r1-", "-r2-")
    two = pair_logs(loaded, run=later, round_=2, start=LATER)
    assert one[0].text != two[0].text and one[1].text != two[1].text
    record = pair_read(loaded, *two, run=later)
    assert (record["status"], record["errors"]) == ("ok", ())
    crossed = pair_read(loaded, two[0], one[1], run=later)  # round 1's server as round 2's
    assert crossed["status"] == "foreign"


def test_only_a_pair_runs_worker_prints_a_log(loaded: LoadedSite) -> None:
    """An MPI TrainJob's worker runs sshd: nothing nvcregen reads, pair test or not."""
    mpi = pair_run(server_log=False)
    worker = run_pod_log(printer(loaded), mpi, f"{RUN}-node-0-0-k2x9p", PAIR, START, launcher=False,
                         on="node-b")  # fmt: skip
    assert worker == ""


def test_a_failing_link_between_the_pairs_leaves_fails_its_first_rail(loaded: LoadedSite) -> None:
    """`--fail LEAF-A,LEAF-B`: a pair's rails cross that link as its NCCL runs do."""
    leaves = {"node-a": "leaf-1", "node-b": "leaf-2"}
    for link, fails in (
        (frozenset({"leaf-1", "leaf-2"}), True),
        (frozenset({"leaf-1", "leaf-3"}), False),
    ):
        made_by = replace(printer(loaded), links=frozenset({link}), leaves=leaves)
        client = run_pod_log(made_by, pair_run(), f"{RUN}-launcher-0-0-q7w2e", PAIR, START,
                             launcher=True, on="node-a")  # fmt: skip
        assert client.endswith(f"@@nvcregen-rdma end rc={int(fails)}\n"), link


def test_the_loopback_and_the_pair_share_one_rail_loop(loaded: LoadedSite) -> None:
    """`rail_sections`: a section per HCA; only a measuring side prints a table and its
    floor line, with the floor and rail end as each script's template prints them."""
    unit = unit_of(loaded, "rdma-rails-pair", "two-node")
    rdma = RDMAPAIR.block(unit.test)
    rails = rails_of(unit, rdma)
    client = RailSide(True, True, "380.0", "rc=0 x=1", (2, 1))
    lines, rc = rail_sections(unit, rdma, rails, client)
    text = "\n".join(lines)
    assert rc == 1 and text.count("@@nvcregen-rdma rail begin hca=") == len(rails.hcas) == 8
    assert text.count("@@nvcregen-rdma rail end hca=mlx5_0 rc=0 x=1") == 1
    assert [line for line in lines if "below" in line] == [
        "nvcregen: mlx5_0 38.00 Gb/s at 8388608 B, below 380.0 Gb/s"
    ]
    assert " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:02" in lines
    served, served_rc = rail_sections(unit, rdma, rails, replace(client, measures=False))
    assert served_rc == 0 and not [line for line in served if "below" in line]
    assert not [line for line in served if "BW average" in line]  # a server measures nothing
    healthy, healthy_rc = rail_sections(unit, rdma, rails, replace(client, failing=False))
    assert healthy_rc == 0 and sum("BW average" in line for line in healthy) == 8
