"""Each test kind's rehearsal log maker, read back by the reader `collect` uses (issue #34).

Pure: no twin. An H100 site (`tests/kindsite.py`: the shipped trainer site's pool,
re-modelled with 400 Gb/s NICs and the catalog's nvbandwidth floors) runs node-health,
DCGM, nvbandwidth, RDMA rails, link counters, burn-in and NCCL in a node, NCCL and RDMA
rails across the pair. Each maker's output is given to its kind's reader
(`kinds/node/logs.py`, `kinds/nvbandwidth/logs.py`, `kinds/rdma/logs.py`,
`kinds/linkcounters/logs.py`; burn-in and the pair in
`test_rehearse_makers_burnin_pair.py`): a healthy node passes with margins to spare, a
failing node fails in the kind's own terms. Then every pod's log of the rendered site,
packed and per run, the pair runs' servers' included, is collected with `collect
--from`: pass, and with node-a failing, node-a failed by every kind of the single-node
stage and node-b suspect. The registry holds every registered kind to a maker or a
refusal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from kindsite import SINGLE, SITES, write_project
from linkctrlogs import gpud_counters

from nvcregen.cli import main
from nvcregen.collect.collector import load_site_file
from nvcregen.collect.model import LoadedSite
from nvcregen.core import units
from nvcregen.kindapi import registry as kindapi_registry
from nvcregen.kindapi.registry import KINDS
from nvcregen.kinds.linkcounters.kind import KIND as LINKCOUNTERS
from nvcregen.kinds.linkcounters.logs import read_link_counter_log
from nvcregen.kinds.linkcounters.maker import link_counters_output
from nvcregen.kinds.linkcounters.reader import parse_link_counters
from nvcregen.kinds.node.logs import read_node_health
from nvcregen.kinds.node.maker import node_health_output
from nvcregen.kinds.node.reader import parse_node_health_log
from nvcregen.kinds.nvbandwidth.files import model_bounds
from nvcregen.kinds.nvbandwidth.kind import KIND as NVBANDWIDTH
from nvcregen.kinds.nvbandwidth.logs import read_nvbandwidth
from nvcregen.kinds.nvbandwidth.maker import nvbandwidth_output
from nvcregen.kinds.nvbandwidth.params import NvbandwidthParams
from nvcregen.kinds.nvbandwidth.physics import Direction, floor_of
from nvcregen.kinds.nvbandwidth.reader import parse_nvbandwidth
from nvcregen.kinds.rdma.logs import read_rails
from nvcregen.kinds.rdma.reader import parse_perftest
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.makers import registry
from nvcregen.rehearse.makers.registry import maker_of, refusal_of, unmade
from nvcregen.rehearse.podlogs import node_pack_log, run_pod_log
from nvcregen.rehearse.prepare import NotRehearsableError, prepare
from nvcregen.rehearse.printer import FAILING_SHARE, Output, PackPod, Printer, Section, bus_ids
from nvcregen.results.packlogs import sections

START = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
POD = "kinds-trainer-single-node-pack-0-r1-c0-0-abcde"
NCCL = "nccl-all-reduce"
TEST = "nvcregen.io/test"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("kinds"))


@pytest.fixture(scope="module")
def loaded(project: Path) -> LoadedSite:
    return load_site_file(project, str(project / "sites" / "kinds-trainer.yaml"))


def printer(loaded: LoadedSite, *failing: str) -> Printer:
    return Printer(loaded.plan.units, loaded.plan.catalog, frozenset(failing))


def unit_of(loaded: LoadedSite, test: str, stage: str = "single-node") -> TestUnit:
    (found,) = [u for u in loaded.plan.units if (u.stage.name, u.test.name) == (stage, test)]
    return found


def made(loaded: LoadedSite, test: str, node: str = "node-a", *failing: str) -> Output:
    unit = unit_of(loaded, test)
    pack = PackPod("single-node", (test,), 1, (node,), POD, START)
    maker = maker_of(unit.test.kind)
    assert maker is not None
    return maker(printer(loaded, *failing), unit, Section(pack, START, 60, bool(failing)))


def base(node: str = "node-a") -> dict[str, Any]:
    """What collect knows of a log before reading it (`logruns._base`)."""
    return {"path": f"logs/nvcre/{POD}.log", "nodes": (node,), "pod_node": node}


# --- the registry ---


def test_every_registered_kind_has_a_maker_or_is_refused_with_a_reason() -> None:
    for kind in KINDS:
        assert (maker_of(kind) is not None) != (refusal_of(kind) is not None), kind
    own = [k for k in KINDS if maker_of(k) is not None]
    assert set(own) == set(KINDS) - {"training"}  # each holds its own (`maker.MAKER`)
    assert "goodput is read from NVCRE's GoodputMeasurement" in (refusal_of("training") or "")


def test_a_plan_with_a_kind_without_a_maker_is_named_kind_by_kind(
    loaded: LoadedSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert unmade(loaded.plan.units) == []
    held = kindapi_registry.part_of  # nvbandwidth's package without its maker, rdma's MAKER

    def part_of(kind: str, *asked: Any) -> Any:
        if kind == "rdma" and asked[1] == "REFUSED":  # rdma's package says why it has none
            return "no rails here"
        gone = kind == "nvbandwidth" or (kind == "rdma" and asked[1] == "MAKER")
        return None if gone else held(kind, *asked)

    monkeypatch.setattr(registry, "part_of", part_of)
    assert unmade(loaded.plan.units) == [
        "no rehearsal log is made for nvbandwidth tests (nvbandwidth): no log maker is"
        " registered for the kind 'nvbandwidth' (a `MAKER` in its package's maker.py)",
        "no rehearsal log is made for rdma tests (rdma-rails): no rails here",
    ]


def test_rehearse_refuses_such_a_site_before_the_twin_with_exit_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = kindapi_registry.part_of  # node's package without its maker
    monkeypatch.setattr(registry, "part_of", lambda k, *a: None if k == "node" else held(k, *a))
    site = project / "sites" / "kinds-trainer.yaml"
    with pytest.raises(NotRehearsableError, match=r"for node tests \(node-health\)"):
        prepare(site, project, tmp_path / "scratch")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-twin"))  # the twin is never asked
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["rehearse", str(site)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "nvcregen: kinds-trainer: no rehearsal log is made for node tests (node-health): no log"
        " maker is registered for the kind 'node' (a `MAKER` in its package's maker.py)\n"
    )


# --- the printer's index ---


class Counted(Sequence[TestUnit]):
    """The plan's units, counting how often they are read whole."""

    def __init__(self, found: Sequence[TestUnit]) -> None:
        self.found, self.reads = list(found), 0

    def __getitem__(self, index: Any) -> Any:
        return self.found[index]

    def __len__(self) -> int:
        return len(self.found)

    def __iter__(self) -> Iterator[TestUnit]:
        self.reads += 1
        return iter(self.found)


def test_the_printer_reads_the_units_once_and_finds_each_by_stage_test_and_node(
    loaded: LoadedSite,
) -> None:
    counted = Counted(loaded.plan.units)
    made = Printer(counted, loaded.plan.catalog)
    for _ in range(3):
        for unit in loaded.plan.units:
            for node in ("node-a", "node-b", "", "node-z"):
                assert made.unit(unit.stage.name, unit.test.name, node) is unit_of(
                    loaded, unit.test.name, unit.stage.name
                )
    assert counted.reads == 1
    assert made.unit("single-node", "no-such-test", "node-a") is None
    assert made.unit("two-node", "node-health") is None  # a test of another stage


def test_a_node_of_another_pool_gets_that_pools_unit(loaded: LoadedSite) -> None:
    first = unit_of(loaded, "node-health")
    other = type(first.pool.spec).model_validate(
        {**first.pool.spec.model_dump(by_alias=True, exclude_none=True),
         "name": "other", "nodes": ["node-c"]}
    )  # fmt: skip
    second = replace(first, pool=replace(first.pool, spec=other))
    both = Printer([first, second], loaded.plan.catalog)
    assert both.unit("single-node", "node-health", "node-c") is second
    assert both.unit("single-node", "node-health", "node-a") is first
    assert both.unit("single-node", "node-health", "node-z") is first  # no pool names it
    assert both.unit("single-node", "node-health") is first


# --- node-health ---


def test_a_healthy_nodes_node_health_log_passes_every_check(loaded: LoadedSite) -> None:
    output = made(loaded, "node-health")
    assert output.rc == 0 and not output.exit_line
    record = read_node_health(output.text, base(), unit_of(loaded, "node-health"))
    assert (record["status"], record["errors"], record["unjudged"]) == ("ok", (), ())
    assert record["warnings"] == () and record["hosts"] == ("node-a",)
    assert record["versions"] == ("580.159.04",)  # the pool's expected driver
    ((node, xml), (_, kernel)) = parse_node_health_log(output.text, "log")
    assert node == "node-a" and xml.cuda == "13.0" and len(xml.gpus) == 8
    assert [g.bus_id for g in xml.gpus] == [f"{b}.0" for b in bus_ids(8)]
    assert {g.product for g in xml.gpus} == {"NVIDIA H100 80GB HBM3"}  # the catalog's label
    assert {(g.pcie_gen, g.pcie_gen_max, g.pcie_width, g.pcie_width_max) for g in xml.gpus} == {
        (5, 5, 16, 16)
    }
    assert min(g.slowdown_headroom or 0 for g in xml.gpus) > 5  # no NVC814 warning either
    assert kernel.kernel and kernel.xids == ()


def test_a_failing_nodes_node_health_log_fails_a_check_on_gpu_0(loaded: LoadedSite) -> None:
    output = made(loaded, "node-health", "node-a", "node-a")
    assert output.rc == 0  # nvidia-smi ran: the failure is what it printed
    record = read_node_health(output.text, base(), unit_of(loaded, "node-health"))
    assert record["status"] == "failed"
    (error,) = record["errors"]
    assert error.startswith("NVC804 GPU 0 (00000000:18:00.0): uncorrectable ECC errors")


def test_node_health_follows_what_the_pool_states(loaded: LoadedSite) -> None:
    """Another driver, CUDA and PCIe width stated: the log shows them, and still passes."""
    unit = unit_of(loaded, "node-health")
    expect = unit.pool.spec.expect
    assert expect is not None
    stated = expect.model_copy(update={"driver": "570.195.03", "cuda": "12.8", "pcie_width": 8})
    spec = unit.pool.spec.model_copy(update={"expect": stated})
    other = replace(unit, pool=replace(unit.pool, spec=spec))
    pack = PackPod("single-node", ("node-health",), 1, ("node-b",), POD, START)
    output = node_health_output(printer(loaded), other, Section(pack, START, 60, False))
    record = read_node_health(output.text, base("node-b"), other)
    assert (record["status"], record["versions"]) == ("ok", ("570.195.03",))
    assert "<current_link_width>8x</current_link_width>" in output.text
    assert "<cuda_version>12.8</cuda_version>" in output.text


def test_two_rounds_of_a_node_never_print_the_same_node_health_log(loaded: LoadedSite) -> None:
    unit = unit_of(loaded, "node-health")
    first = PackPod("single-node", ("node-health",), 1, ("node-a",), POD, START)
    later = datetime(2026, 12, 6, 9, 30, tzinfo=UTC)
    one = node_health_output(printer(loaded), unit, Section(first, START, 60, False))
    two = node_health_output(printer(loaded), unit, Section(first, later, 60, False))
    assert one.text != two.text
    assert "<timestamp>Sun Dec  6 09:30:00 2026</timestamp>" in two.text


# --- nvbandwidth ---


def nvbw_params(unit: TestUnit) -> NvbandwidthParams:
    return NVBANDWIDTH.block(unit.test)


def nvbw_bounds(loaded: LoadedSite) -> tuple[dict[str, float], dict[str, float | None]]:
    unit = unit_of(loaded, "nvbandwidth")
    bounds = model_bounds("H100", NVBANDWIDTH.block_or_none(unit.test))
    assert bounds is not None and bounds.floor is not None
    ways: tuple[Direction, ...] = ("hostToDevice", "deviceToHost", "deviceToDevice")
    floors = {w: floor_of(bounds.floor, w) for w in ways}
    return {w: f for w, f in floors.items() if f is not None}, {
        w: bounds.ceilings.of(w) for w in ways
    }


def test_a_healthy_nodes_nvbandwidth_passes_midway_between_floor_and_ceiling(
    loaded: LoadedSite,
) -> None:
    output = made(loaded, "nvbandwidth")
    assert output.rc == 0 and not output.exit_line
    assert output.text.startswith(
        f"@@nvcregen-nvbandwidth begin node=node-a pod={POD} start=2026-12-06T09:00:00Z\n"
    )
    assert output.text.endswith("nvcregen: nvbandwidth exit=0 seconds=60\n")
    unit = unit_of(loaded, "nvbandwidth")
    record = read_nvbandwidth(output.text, base(), unit, names_itself=True)
    assert (record.status, record.errors, record.hosts) == ("ok", (), ("node-a",))
    asked = nvbw_params(unit).testcases
    run = parse_nvbandwidth(output.text, "log", asked)
    assert run.host == "node-a" and len(run.devices) == 8 and run.driver == "580.159.04"
    assert [t.name for t in run.testcases] == asked
    floors, ceilings = nvbw_bounds(loaded)
    (h2d, _, d2d, _) = run.testcases
    assert h2d.matrix is not None and d2d.matrix is not None
    assert {v for _, _, v in h2d.matrix.pairs()} == {55.5}  # (48 + 63) / 2 GB/s
    assert {v for _, _, v in d2d.matrix.pairs()} == {392.5}  # (335 + 450) / 2 GB/s
    assert floors["hostToDevice"] < 55.5 < (ceilings["hostToDevice"] or 0)
    assert len(list(d2d.matrix.pairs())) == 56  # every ordered pair, N/A on the diagonal
    assert h2d.sum == pytest.approx(8 * 55.5)


def test_a_failing_nodes_gpu_0_copies_at_a_tenth_of_the_floor(loaded: LoadedSite) -> None:
    output = made(loaded, "nvbandwidth", "node-a", "node-a")
    assert output.rc == 0  # nvbandwidth ran: the figures fail the node
    record = read_nvbandwidth(
        output.text, base(), unit_of(loaded, "nvbandwidth"), names_itself=True
    )
    assert record.status == "failed"
    floors, _ = nvbw_bounds(loaded)
    assert record.errors[:2] == (
        f"host_to_device_memcpy_ce GPU 0: {floors['hostToDevice'] * FAILING_SHARE:g} GB/s,"
        f" under the floor {floors['hostToDevice']:g} GB/s",
        f"device_to_host_memcpy_ce GPU 0: {floors['deviceToHost'] * FAILING_SHARE:g} GB/s,"
        f" under the floor {floors['deviceToHost']:g} GB/s",
    )
    pairs = [e for e in record.errors if e.startswith("device_to_device_memcpy_read_ce")]
    assert len(pairs) == 7 and all(e.split(": ")[0].endswith(tuple(
        f"GPU 0 <- GPU {p}" for p in range(1, 8))) for e in pairs)  # fmt: skip
    assert len(record.errors) == 2 + 2 * 7  # GPU 0's copies only: every other GPU passes
    assert all(e.split(" ", 1)[1].startswith("GPU 0") for e in record.errors)


def test_a_testcase_held_to_no_floor_is_printed_and_passes(loaded: LoadedSite) -> None:
    unit = unit_of(loaded, "nvbandwidth")
    asked = [*nvbw_params(unit).testcases, "host_to_device_bidirectional_memcpy_ce",
             "device_to_device_bidirectional_memcpy_read_sm", "host_device_latency_sm"]  # fmt: skip
    params = nvbw_params(unit).model_copy(update={"testcases": asked})
    other = replace(unit, test=unit.test.model_copy(update={"nvbandwidth": params}))
    pack = PackPod("single-node", ("nvbandwidth",), 1, ("node-a",), POD, START)
    output = nvbandwidth_output(printer(loaded), other, Section(pack, START, 60, False))
    record = read_nvbandwidth(output.text, base(), other, names_itself=True)
    assert (record.status, record.errors) == ("ok", ())
    run = parse_nvbandwidth(output.text, "log", asked)
    units_of = {t.name: t.unit for t in run.testcases}
    assert units_of["host_device_latency_sm"] == "ns"
    assert units_of["device_to_device_bidirectional_memcpy_read_sm"] == "GB/s"


# --- RDMA rails ---


def test_a_healthy_nodes_rails_pass_midway_between_floor_and_line_rate(
    loaded: LoadedSite,
) -> None:
    output = made(loaded, "rdma-rails")
    assert output.rc == 0 and not output.exit_line
    unit = unit_of(loaded, "rdma-rails")
    record = read_rails(output.text, base(), unit, names_itself=True)
    assert (record["status"], record["errors"], record["hosts"]) == ("ok", (), ("node-a",))
    assert output.text.endswith("@@nvcregen-rdma end rc=0\n")
    first = output.text.split("@@nvcregen-rdma rail begin hca=mlx5_0 gpu=0 numa=0\n")[1]
    (run,) = parse_perftest(first.split("@@nvcregen-rdma rail end")[0], "rail")
    assert (run.status, run.device, run.link_type, run.gpu) == (
        "ok", "mlx5_0", "Ethernet", "NVIDIA H100 80GB HBM3",
    )  # fmt: skip
    row = run.at(units.parse_size("8MiB"))
    assert row is not None
    assert row.average_gbps == 390.0  # (0.95 x 400 + 400) / 2
    assert row.msg_rate_mpps == pytest.approx(390e3 / 8 / (8 << 20), abs=1e-6)
    assert output.text.count("@@nvcregen-rdma rail begin") == 8


def test_a_failing_nodes_first_rail_is_a_tenth_of_its_floor(loaded: LoadedSite) -> None:
    output = made(loaded, "rdma-rails", "node-a", "node-a")
    assert output.rc == 1  # the script holds each rail to the floor too
    assert "nvcregen: mlx5_0 38.00 Gb/s at 8388608 B, below 380 Gb/s\n" in output.text
    assert output.text.endswith("@@nvcregen-rdma end rc=1\n")
    record = read_rails(output.text, base(), unit_of(loaded, "rdma-rails"), names_itself=True)
    assert record["status"] == "failed"
    assert record["errors"] == (
        "NVC832: node-a mlx5_0: 38.00 Gb/s at 8MiB, below the floor 380 Gb/s (0.95 of 400 Gb/s)",
    )


# --- link counters ---

TEMPLATE = (
    Path(__file__).resolve().parents[3]
    / "nvcregen/kinds/linkcounters/templates/link-counters.sh.j2"
)
LOOPBACK = int(400e9 / 8 * 0.9 * 60)  # bytes: 0.9 of a 400 Gb/s line rate for 60 s
INTERVAL = 5 + 8 + 60 + 2  # the before-snapshot, each HCA's set-up, the traffic, the reaping


def link_unit(
    loaded: LoadedSite, limit: dict[str, float | None] | None = None, fabric: str = "roce"
) -> TestUnit:
    """The site's link-counters unit: its pool's fabric, its symbol_error limit as given."""
    unit = unit_of(loaded, "link-counters")
    block = LINKCOUNTERS.block_or_none(unit.test)
    nics = unit.pool.spec.nics
    assert block is not None and nics is not None
    if limit:
        limits = [
            x.model_copy(update=limit) if x.counter == "symbol_error" else x for x in block.limits
        ]
        block = block.model_copy(update={"limits": limits})
    spec = unit.pool.spec.model_copy(update={"nics": nics.model_copy(update={"fabric": fabric})})
    test = unit.test.model_copy(update={"linkcounters": block})
    return replace(unit, test=test, pool=replace(unit.pool, spec=spec))


def link_log(loaded: LoadedSite, unit: TestUnit, failing: bool = False, round_: int = 1,
             start: datetime = START) -> Output:  # fmt: skip
    pack = PackPod("single-node", ("link-counters",), round_, ("node-a",), POD, start)
    return link_counters_output(printer(loaded), unit, Section(pack, start, 150, failing))


def ctr_names(text: str, group: str) -> dict[str, list[str]]:
    """Each HCA's counters of one group in the before-snapshot, in the order printed."""
    before = text.split("@@linkctr snapshot end before", maxsplit=1)[0]
    found: dict[str, list[str]] = {}
    for line in before.splitlines():
        if line.startswith("ctr ") and line.split()[3] == group:
            found.setdefault(line.split()[1], []).append(line.split()[4])
    return found


def test_a_healthy_nodes_link_counters_pass_every_limit(loaded: LoadedSite) -> None:
    output = made(loaded, "link-counters")
    assert output.rc == 0 and not output.exit_line
    assert output.text.startswith(
        f"@@nvcregen-linkctr begin node=node-a pod={POD} start=2026-12-06T09:00:00Z\n"
        f"@@linkctr snapshot before epoch={int(START.timestamp()) + 1}\n"
        "@@linkctr port mlx5_0 1 layer=Ethernet state=4\n"
    )
    assert output.text.endswith("@@linkctr snapshot end after\n@@nvcregen-linkctr end rc=0\n")
    unit = unit_of(loaded, "link-counters")
    record = read_link_counter_log(output.text, base(), unit, names_itself=True)
    assert (record["status"], record["errors"], record["hosts"]) == ("ok", (), ("node-a",))
    assert not record["notes"]  # every limit applied (a note would be the run's, said once)
    (run,) = parse_link_counters(output.text, "log")
    assert (run.seconds, run.rc) == (INTERVAL, 0)
    assert run.traffic == {f"mlx5_{i}": (0, 0) for i in range(8)}
    ports = run.deltas()
    assert [(p.hca, p.port, p.layer) for p in ports] == [
        (f"mlx5_{i}", 1, "Ethernet") for i in range(8)
    ]
    block = LINKCOUNTERS.block_or_none(unit.test)
    assert block is not None
    for port in ports:
        assert port.problems == () and [c for c in port.counters if c.problem] == []
        assert {(x.group, x.counter): 0 for x in block.limits} == {
            (x.group, x.counter): getattr(port.counter(x.group, x.counter), "delta", None)
            for x in block.limits
        }  # a healthy port's errors do not move
        requests = port.counter("hw_counters", "rx_write_requests")
        assert requests is not None and requests.delta == LOOPBACK // 65536
        for name in ("port_xmit_data", "port_rcv_data"):  # 4-octet words
            words = port.counter("counters", name)
            assert words is not None and words.delta is not None
            assert LOOPBACK <= 4 * words.delta <= LOOPBACK + 51_000 * INTERVAL + 4
        cnps = port.counter("hw_counters", "np_cnp_sent")
        assert cnps is not None and cnps.delta is not None and 1 <= cnps.delta <= 3


def test_link_counters_are_what_the_script_reads_of_an_mlx5_port(loaded: LoadedSite) -> None:
    """counters/ as gpud's ConnectX-7 sample shows it, each glob in the C locale's order,
    ethtool's statistics only those the script's awk keeps."""
    roce = link_log(loaded, link_unit(loaded)).text
    sysfs = ctr_names(roce, "counters")
    assert set(sysfs) == {f"mlx5_{i}" for i in range(8)}
    assert all(names == sorted(gpud_counters()) for names in sysfs.values())
    hw = ctr_names(roce, "hw_counters")["mlx5_0"]
    assert hw == sorted(hw) and {"np_cnp_sent", "rnr_nak_retry_err", "lifespan"} <= set(hw)
    kept = re.search(r"\$1 ~ /(.+?)/ \{", TEMPLATE.read_text())
    assert kept is not None
    ethtool = ctr_names(roce, "ethtool")["mlx5_0"]
    assert len(ethtool) == 8 * 4 + 2 and ethtool[-2:] == ["rx_prio3_pause", "tx_prio3_pause"]
    assert all(re.search(kept.group(1), f"{name}:") for name in ethtool)
    unit = link_unit(loaded, fabric="ib")
    ib = link_log(loaded, unit).text
    assert "layer=InfiniBand state=4" in ib and "layer=Ethernet" not in ib
    assert ctr_names(ib, "ethtool") == {}  # an IPoIB netdev: nothing the awk keeps
    assert ctr_names(ib, "counters") == sysfs
    assert set(ctr_names(ib, "hw_counters")["mlx5_0"]) == set(hw) - {
        "np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored",
        "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
        "roce_slow_restart_trans", "rx_icrc_encapsulated",
    }  # fmt: skip
    record = read_link_counter_log(ib, base(), unit, names_itself=True)
    assert (record["status"], record["errors"]) == ("ok", ())
    assert not record["notes"]


def test_a_failing_nodes_first_hca_drops_its_link_and_collect_names_its_port(
    loaded: LoadedSite,
) -> None:
    output = made(loaded, "link-counters", "node-a", "node-a")
    assert output.rc == 0  # the traffic survived: the failure is in the counters
    assert output.text.endswith("@@nvcregen-linkctr end rc=0\n")
    record = read_link_counter_log(
        output.text, base(), unit_of(loaded, "link-counters"), names_itself=True
    )
    assert record["status"] == "failed"
    assert record["errors"] == (
        "NVC762: node-a mlx5_0 port 1: counters/link_downed grew by 1, more than 0",
        "NVC762: node-a mlx5_0 port 1: counters/symbol_error grew by 25 (1200.0 an hour),"
        " more than 120 an hour",
    )  # 120 an hour allows 2.5 in 75 s: ten times that
    (run,) = parse_link_counters(output.text, "log")
    recovered = [p.counter("counters", "link_error_recovery") for p in run.deltas()]
    assert [getattr(c, "delta", None) for c in recovered] == [1] + [0] * 7


@pytest.mark.parametrize(
    ("limit", "grown", "error"),
    [
        ({"max_per_hour": 0.0}, 1, "grew by 1 (48.0 an hour), more than 0 an hour"),
        ({"max_per_hour": 48.0}, 10, "grew by 10 (480.0 an hour), more than 48 an hour"),
        ({"max_per_hour": None, "max_delta": 4}, 40, "grew by 40, more than 4"),
        ({"max_per_hour": 1e9}, 65532, ""),  # never saturated: link_downed fails it alone
    ],
)
def test_a_failing_ports_symbol_errors_break_whatever_limit_the_catalog_states(
    loaded: LoadedSite, limit: dict[str, float | None], grown: int, error: str
) -> None:
    unit = link_unit(loaded, limit)
    output = link_log(loaded, unit, failing=True)
    (run,) = parse_link_counters(output.text, "log")
    symbols = run.deltas()[0].counter("counters", "symbol_error")
    assert symbols is not None and (symbols.delta, symbols.problem) == (grown, "")
    record = read_link_counter_log(output.text, base(), unit, names_itself=True)
    expected = ["NVC762: node-a mlx5_0 port 1: counters/link_downed grew by 1, more than 0"]
    if error:
        expected.append(f"NVC762: node-a mlx5_0 port 1: counters/symbol_error {error}")
    assert record["errors"] == tuple(expected)


def test_two_rounds_of_a_node_never_print_the_same_link_counters(loaded: LoadedSite) -> None:
    """Every counter counts since boot: the next round starts where the last one ended."""
    unit = unit_of(loaded, "link-counters")
    one = link_log(loaded, unit).text
    two = link_log(loaded, unit, round_=2, start=datetime(2026, 12, 6, 9, 30, tzinfo=UTC)).text
    counters = [[x for x in t.splitlines() if x.startswith("ctr ")] for t in (one, two)]
    assert counters[0] != counters[1]
    ((first,), (second,)) = (parse_link_counters(t, "log") for t in (one, two))
    assert first.after is not None and second.before is not None
    moved = 0
    for key, port in first.after.ports.items():
        later = second.before.ports[key].counters
        assert all((later[name] or 0) >= (value or 0) for name, value in port.counters.items())
        moved += sum(later[name] != value for name, value in port.counters.items())
    assert moved > 8 * 10
    requests = [d.counter("hw_counters", "rx_write_requests") for d in second.deltas()]
    # this round's loopback, on top of the last one's
    assert {getattr(c, "delta", None) for c in requests} == {LOOPBACK // 65536}


def test_a_failing_nodes_link_counters_count_on_from_its_last_round(
    loaded: LoadedSite,
) -> None:
    unit = unit_of(loaded, "link-counters")
    later = datetime(2026, 12, 6, 9, 30, tzinfo=UTC)
    one = link_log(loaded, unit, failing=True).text
    two = link_log(loaded, unit, failing=True, round_=2, start=later).text
    ((first,), (second,)) = (parse_link_counters(t, "log") for t in (one, two))
    assert first.after is not None and second.before is not None and second.after is not None
    port = ("mlx5_0", 1)
    for name in ("link_downed", "link_error_recovery", "symbol_error"):
        was = first.after.ports[port].counters["counters", name]
        assert second.before.ports[port].counters["counters", name] == was
        assert second.after.ports[port].counters["counters", name] == (was or 0) + (
            25 if name == "symbol_error" else 1
        )
    record = read_link_counter_log(two, base(), unit, names_itself=True)
    assert [e.split(": ")[2].split(" grew")[0] for e in record["errors"]] == [
        "counters/link_downed",
        "counters/symbol_error",
    ]
    huge = link_unit(loaded, {"max_per_hour": 1e9})  # 65,532 a round: the second saturates
    (run,) = parse_link_counters(link_log(loaded, huge, True, 2, later).text, "log")
    symbols = run.deltas()[0].counter("counters", "symbol_error")
    assert symbols is not None and symbols.after == 65535  # IB's 16 bits, never past them
    assert symbols.problem.startswith("NVC760: mlx5_0 port 1: counters/symbol_error stands at")


# --- a pack and the whole site, collected ---


def test_a_node_pack_prints_each_kind_in_its_section(loaded: LoadedSite) -> None:
    pack = PackPod("single-node", SINGLE, 1, ("node-a",), POD, START)
    found, problems = sections(node_pack_log(printer(loaded), pack))
    assert problems == [] and [(s.test, s.rc) for s in found] == [(t, 0) for t in SINGLE]
    failed, _ = sections(node_pack_log(printer(loaded, "node-a"), pack))
    assert [(s.test, s.rc) for s in failed] == [
        ("node-health", 0), ("dcgm-l1", 1), ("nvbandwidth", 0), ("rdma-rails", 1),
        ("link-counters", 0), ("burn-in", 1), ("nccl-all-reduce", 0),
    ]  # fmt: skip


def rendered_runs(project: Path, tmp: Path, name: str) -> list[dict[str, Any]]:
    out = tmp / "out"
    site = project / "sites" / f"{name}.yaml"
    result = CliRunner().invoke(main, ["render", "--out", str(out), str(site)])
    assert result.exit_code == 0, result.output
    found = [yaml.safe_load(p.read_text()) for p in sorted((out / name).rglob("*.yaml"))]
    return [o for o in found if isinstance(o, dict) and o.get("kind") in {"Job", "TrainJob"}]


def collected(project: Path, tmp: Path, packing: str, *failing: str) -> tuple[int, dict[str, Any]]:
    """Every pod's log of the rendered site, saved as `kubectl logs` would, then collected."""
    name = SITES[packing]
    site = project / "sites" / f"{name}.yaml"
    made_by = printer(load_site_file(project, str(site)), *failing)
    runs = rendered_runs(project, tmp, name)
    saved = tmp / "saved"
    for obj in runs:
        meta = obj["metadata"]
        nodes = meta["annotations"]["nvcregen.io/nodes"].split(",")
        where = saved / "logs" / meta["namespace"]
        where.mkdir(parents=True, exist_ok=True)
        if obj["kind"] == "Job":
            for index, node in enumerate(nodes):
                pod = f"{meta['name']}-{index}-k{index}x9"
                text = run_pod_log(made_by, obj, pod, [node], START, launcher=False)
                (where / f"{pod}.log").write_text(text)
            continue
        pod = f"{meta['name']}-launcher-0-0-q7w2e"
        text = run_pod_log(made_by, obj, pod, nodes, START, launcher=True, on=nodes[0])
        (where / f"{pod}.log").write_text(text)
        if meta["annotations"].get("nvcregen.io/server-log") == "node":  # a pair's server too
            pod = f"{meta['name']}-node-0-0-k2x9p"
            text = run_pod_log(made_by, obj, pod, nodes, START, launcher=False, on=nodes[-1])
            (where / f"{pod}.log").write_text(text)
    (saved / "objects.yaml").write_text(yaml.safe_dump({"kind": "List", "items": runs}))
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp / "r")]
    result = CliRunner().invoke(main, args)
    assert "Traceback" not in result.output
    (archive,) = (tmp / "r" / name).iterdir()
    verdicts: dict[str, Any] = json.loads((archive / "verdicts.json").read_text())
    return result.exit_code, verdicts


@pytest.mark.slow
@pytest.mark.parametrize("packing", list(SITES))
def test_the_sites_logs_collect_to_pass(project: Path, tmp_path: Path, packing: str) -> None:
    code, verdicts = collected(project, tmp_path, packing)
    assert (code, verdicts["word"]) == (0, "pass"), verdicts.get("findings")
    assert {n["node"]: n["status"] for n in verdicts["nodes"]} == {
        "node-a": "cleared",
        "node-b": "cleared",
    }
    assert verdicts.get("findings", []) == []
    tests = {(r["stage"], r["test"], r["why"]) for n in verdicts["nodes"] for r in n["runs"]}
    assert {
        ("single-node", "burn-in", "passed"),
        ("two-node", "rdma-rails-pair", "passed"),
    } <= tests


@pytest.mark.slow
@pytest.mark.parametrize("packing", list(SITES))
def test_a_failing_node_is_failed_by_every_kind(
    project: Path, tmp_path: Path, packing: str
) -> None:
    code, verdicts = collected(project, tmp_path, packing, "node-a")
    assert (code, verdicts["word"]) == (1, "fail")
    assert {n["node"]: n["status"] for n in verdicts["nodes"]} == {
        "node-a": "failed",
        "node-b": "suspect",  # its pair's NCCL runs failed with node-a
    }
    reasons = {n["node"]: n["reasons"] for n in verdicts["nodes"]}
    prefix = "failed alone in single-node / "
    failed_by = {
        r.removeprefix(prefix).split(":")[0].split(" ")[0]
        for r in reasons["node-a"]
        if r.startswith(prefix)
    }
    assert failed_by == set(SINGLE), reasons["node-a"]
    assert not any(r.startswith(prefix) for r in reasons["node-b"])
    linked = [r for r in reasons["node-a"] if r.startswith(f"{prefix}link-counters: ")]
    assert len(linked) == 2 and all(  # both rounds, naming node, HCA and port
        "NVC762: node-a mlx5_0 port 1: counters/link_downed grew by 1, more than 0" in r
        for r in linked
    ), linked
    paired = [r for r in reasons["node-b"] if "two-node / rdma-rails-pair" in r]
    assert paired == [  # both nodes of the pair suspects, the failing rail naming both
        "only in failing groups of two-node / rdma-rails-pair g0 with node-a: "
        + "; ".join(f"round {n}: RailFailed: NVC832: node-a -> node-b mlx5_0: 38.00 Gb/s at 8MiB,"
                    " below the floor 380 Gb/s (0.95 of 400 Gb/s)" for n in (1, 2))
    ]  # fmt: skip


def test_a_run_of_one_test_prints_its_output_alone(loaded: LoadedSite) -> None:
    labels = {"nvcregen.io/stage": "single-node", "nvcregen.io/round": "2"}
    job = {"kind": "Job", "metadata": {"name": "j", "labels": {**labels, TEST: "node-health"}}}
    text = run_pod_log(printer(loaded), job, "j-x7k2p", ["node-a"], START, launcher=False)
    unit = unit_of(loaded, "node-health")
    pack = PackPod("single-node", ("node-health",), 2, ("node-a",), "j-x7k2p", START)
    seconds = round(unit.expected_ms / 1000)
    assert (
        text == node_health_output(printer(loaded), unit, Section(pack, START, seconds, False)).text
    )
    assert "@@nvcregen-pack" not in text  # its own script's output: no pack sections
    trainjob = {"kind": "TrainJob", "metadata": {"name": "t", "labels": {**labels, TEST: NCCL}}}
    launched = run_pod_log(printer(loaded), trainjob, "t-l", ["node-a"], START, launcher=True)
    assert "@@nvcregen-pack" not in launched
    ends = r"\n# Avg bus bandwidth .*\n#\nnvcregen: nccl-all-reduce exit=0 seconds=\d+\n$"
    assert re.search(ends, launched)
    assert run_pod_log(printer(loaded), trainjob, "t-w", ["node-a"], START, launcher=False) == ""
    other = {"kind": "Job", "metadata": {"name": "o", "labels": {**labels, TEST: "pack-9"}}}
    assert run_pod_log(printer(loaded), other, "o-p", ["node-a"], START, launcher=False) == ""
