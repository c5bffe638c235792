"""The linkcounters kind (issue #36, item 3): catalog block, time, the script, both engines."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from linkctrlogs import ethtool_values, gpud_counters, grep_values
from sitefactory import catalog, parse, plan_of
from trainerfactory import EXAMPLE, compiled, of_kind, without_packing

from nvcregen.chain.pipeline import Options, compile_source
from nvcregen.cli import main
from nvcregen.compile.readiness.nodescript import node_script
from nvcregen.kindapi.protocol import FixedTime, NodeRun
from nvcregen.kindapi.registry import kind_of
from nvcregen.kinds.linkcounters.kind import KIND as LINKCOUNTERS
from nvcregen.kinds.linkcounters.kind import PORT_BASE
from nvcregen.kinds.linkcounters.logs import read_link_counter_log
from nvcregen.kinds.linkcounters.params import CounterLimit, LinkCountersParams
from nvcregen.kinds.linkcounters.reader import parse_link_counters
from nvcregen.plan.resolve import plan
from nvcregen.validate.kindtimeouts import kind_timeout_problems
from nvcregen.validate.semantic import check_plan, check_references

STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["
HCAS = "hcas=( mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7 )"


def site_text(packing: bool = False) -> str:
    """The example trainer site with link counters first in its intra-node stage."""
    text = EXAMPLE.read_text().replace("packing: perRun", "packing: packed")
    text = text if packing else without_packing(EXAMPLE.read_text())
    assert STAGE in text
    return text.replace(STAGE, STAGE + "link-counters, ", 1)


def unit_of(text: str):  # type: ignore[no-untyped-def]
    site, _ = parse(text)
    return site, next(u for u in plan(site, catalog()) if u.test.name == "link-counters")


def test_catalog_entry_limits_and_fixed_time() -> None:
    test = catalog().tests["link-counters"]
    block = LINKCOUNTERS.block_or_none(test)
    assert block is not None and test.scopes == ["intra-node"] and test.transport == "rdma"
    limits = {(x.counter, x.max_delta, x.max_per_hour) for x in block.limits}
    assert ("link_downed", 0, None) in limits and ("symbol_error", None, 120) in limits
    assert all(x.sources for x in block.limits)
    kind = kind_of(test)
    assert kind.fixed_time(test, "15s") == FixedTime(
        135.0, "15s start-up + counters around traffic 2m"
    )
    assert kind.duration_basis(test) == "counters around 60s of traffic, 2m"
    assert kind.nvcre_refusal is not None and kind.nvcre_refusal.code == "NVC333"


def test_a_limit_states_one_bound_and_a_counter_one_limit() -> None:
    with pytest.raises(ValueError, match="state exactly one of maxDelta and maxPerHour"):
        CounterLimit.model_validate({"counter": "x", "sources": ["s"]})
    with pytest.raises(ValueError, match="state exactly one"):
        CounterLimit.model_validate(
            {"counter": "x", "maxDelta": 0, "maxPerHour": 1, "sources": ["s"]}
        )
    one = {"counter": "x", "maxDelta": 0, "sources": ["s"]}
    with pytest.raises(ValueError, match=r"one limit \(twice: counters/x\)"):
        LinkCountersParams.model_validate({"limits": [one, one], "expectedDuration": "1m"})


def test_script_values_and_the_traffic_inside_the_deadline() -> None:
    test = catalog().tests["link-counters"]
    found = kind_of(test).node_script(test, NodeRun(8, 600_000, 540, None, ("mlx5_0", "mlx5_1")))
    assert found is not None and found.template == "link-counters.sh.j2"
    assert found.values == {
        "hcas": ["mlx5_0", "mlx5_1"],
        "traffic_s": 60,
        "port_base": PORT_BASE,
        "traffic_deadline_s": 90,  # its 60 s and 30 s of set-up
    }
    short = kind_of(test).node_script(test, NodeRun(8, 100_000, 70, None, ("mlx5_0",)))
    assert short is not None and short.values["traffic_deadline_s"] == 40  # 30 s kept after
    tiny = kind_of(test).node_script(test, NodeRun(8, 20_000, 10, None, ("mlx5_0",)))
    assert tiny is not None and tiny.values["traffic_deadline_s"] == 1  # never 0


def test_rendered_script_snapshots_every_hca_around_the_traffic() -> None:
    site, unit = unit_of(site_text())
    script = node_script(site, unit)
    assert HCAS in script
    before, after = script.index("snapshot before\n"), script.index("snapshot after\n")
    assert before < script.index('ib_write_bw "${args[@]}"') < after
    assert 'echo "$mark end rc=$worst"' in script
    if (bash := shutil.which("bash")) is not None:
        assert subprocess.run([bash, "-n", "-c", script], check=False).returncode == 0


def test_plan_budgets_its_fixed_time() -> None:
    _, unit = unit_of(site_text())
    start = catalog().physics.startup.dcgm  # a pod running one command on a node
    fixed = kind_of(unit.test).fixed_time(unit.test, start)
    assert fixed is not None and unit.expected_ms == fixed.seconds * 1000 == 150_000


def test_trainer_job_holds_the_nics_and_joins_the_pod_network() -> None:
    site, _ = unit_of(site_text())
    found = compiled(site_text())
    jobs = of_kind(found, "Job", "link-counters")
    assert len(jobs) == 2 * site.spec.readiness.rounds, "one Job per node and round"
    pod = jobs[0]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["name"] == "link-counters"
    assert container["resources"]["limits"]["rdma/hca"] == 8
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].startswith("roce-0,")
    packed = compiled(site_text(packing=True))
    (job, *_) = [o for o in of_kind(packed, "Job") if "link-counters" in str(o["spec"])]
    assert "link-counters" in job["metadata"]["annotations"]["nvcregen.io/tests"]


def test_nvcre_mode_refuses_it_nvc333() -> None:
    text = site_text()
    site, doc = parse(text)
    assert not [d for d in check_references(site, catalog(), doc) if d.code == "NVC333"]
    nvcre = re.sub(r"\n    engine: trainer .*\n", "\n    engine: nvcre\n", text)
    assert nvcre != text
    site, doc = parse(nvcre)
    (found,) = [d for d in check_references(site, catalog(), doc) if d.code == "NVC333"]
    assert found.message.startswith("link-counters is judged only from its log")
    assert found.path == "/spec/readiness/stages/0/tests/0"
    assert found.hint == "run it with readiness.engine: trainer, or remove it from this stage"


def test_a_pool_naming_no_hcas_is_refused_nvc833() -> None:
    hcas = "        hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7]\n"
    site, doc = parse(site_text().replace(hcas, ""))
    (found,) = [d for d in check_references(site, catalog(), doc) if d.code == "NVC833"]
    assert "link-counters measures each RDMA NIC" in found.message


FAKE_TOOL = """#!/usr/bin/env python3
# A stand-in for ib_write_bw: the server listens on -p and takes one client; the client
# connects to it and writes into the fake sysfs the traffic it 'carried'.
import socket, sys, time
args = sys.argv[1:]
port = int(args[args.index("-p") + 1])
if args[-1] != "127.0.0.1":
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port)); server.listen(1)
    server.settimeout(20); conn, _ = server.accept(); conn.close()
    sys.exit(0)
socket.create_connection(("127.0.0.1", port), timeout=5).close()
time.sleep(int(args[args.index("-D") + 1]))  # the traffic lasts its -D seconds
hca = args[args.index("-d") + 1]
path = f"SYSFS/{hca}/ports/1/counters/symbol_error"
value = int(open(path).read()) + GROW
open(path, "w").write(f"{value}\\n")
"""


def fake_sysfs(root: Path, hcas: tuple[str, ...]) -> None:
    """Two HCA ports of the public captures' values (gpud's counters, byteps' hw_counters)."""
    counters = gpud_counters() | {"link_downed": "0", "port_xmit_discards": "0"}
    counters |= {"port_xmit_wait": "0", "excessive_buffer_overrun_errors": "0"}
    for hca in hcas:
        port = root / hca / "ports" / "1"
        (port / "counters").mkdir(parents=True)
        (port / "hw_counters").mkdir()
        (root / hca / "device" / "net" / f"{hca}-eth").mkdir(parents=True)
        (port / "link_layer").write_text("Ethernet\n")
        (port / "state").write_text("4: ACTIVE\n")
        for name, value in counters.items():
            (port / "counters" / name).write_text(value + "\n")
        for name, value in grep_values("byteps-179-hw_counters.txt").items():
            (port / "hw_counters" / name).write_text(value + "\n")


@pytest.mark.slow
@pytest.mark.parametrize(("grow", "status"), [(0, "ok"), (500, "failed")])
def test_the_script_on_a_fake_node_is_read_and_judged(
    tmp_path: Path, grow: int, status: str
) -> None:
    bash, python = shutil.which("bash"), shutil.which("python3")
    if bash is None or python is None or not Path("/proc/net/tcp").exists():
        pytest.skip("needs bash, python3 and /proc/net/tcp")
    hcas = ("mlx5_0", "mlx5_1")
    sysfs = tmp_path / "infiniband"
    fake_sysfs(sysfs, hcas)
    tool = tmp_path / "bin" / "ib_write_bw"
    tool.parent.mkdir()
    body = FAKE_TOOL.replace("SYSFS", str(sysfs)).replace("GROW", str(grow))
    tool.write_text(body.replace("#!/usr/bin/env python3", f"#!{python}"))
    ethtool = tmp_path / "bin" / "ethtool"
    stats = "".join(
        f"     {k}: {v}\n" for k, v in ethtool_values("byteps-179-ethtool-prio-before.txt").items()
    )
    ethtool.write_text(f"#!/bin/sh\ncat <<'EOF'\n{stats}     rx_prio3_pause: 7\nEOF\n")
    for exe in (tool, ethtool):
        exe.chmod(0o755)
    text = site_text()
    site, unit = unit_of(text)
    script = node_script(site, unit).replace(HCAS, "hcas=( mlx5_0 mlx5_1 )")
    script = script.replace("/sys/class/infiniband", str(sysfs))
    script = re.sub(r"-D \d+", "-D 1", script)
    env = {"PATH": f"{tool.parent}:/usr/bin:/bin", "NODE_NAME": "gpu-07", "POD_NAME": "lc-x7k2p"}
    done = subprocess.run([bash, "-c", script], env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = parse_link_counters(done.stdout, "log")
    assert run.traffic == {"mlx5_0": (0, 0), "mlx5_1": (0, 0)} and run.rc == 0
    assert run.seconds is not None and run.seconds >= 1
    ports = run.deltas()
    assert [(p.hca, p.port, p.layer) for p in ports] == [
        ("mlx5_0", 1, "Ethernet"),
        ("mlx5_1", 1, "Ethernet"),
    ]
    pause = ports[0].counter("ethtool", "rx_prio3_pause")
    assert pause is not None and pause.before == 7 and pause.delta == 0
    assert ports[0].counter("ethtool", "rx_prio0_bytes") is not None
    symbol = ports[1].counter("counters", "symbol_error")
    assert symbol is not None and symbol.delta == grow
    base = {"path": "logs/x.log", "nodes": ("gpu-07",)}
    nics = unit.pool.spec.nics
    assert nics is not None
    pool = unit.pool.spec.model_copy(update={"nics": nics.model_copy(update={"hcas": list(hcas)})})
    unit = replace(unit, pool=replace(unit.pool, spec=pool))
    record = read_link_counter_log(done.stdout, base, unit, names_itself=True)
    assert record["status"] == status, record["errors"]


@pytest.mark.slow
@pytest.mark.parametrize("gitops", ["argocd", "flux"])
@pytest.mark.parametrize("packing", [False, True])
def test_a_site_naming_it_renders_checks_and_replays_in_both_gitops_engines(
    gitops: str, packing: bool
) -> None:
    """The whole render chain: every layer, the render gate's checks and the replay."""
    text = site_text(packing).replace("    engine: argocd\n", f"    engine: {gitops}\n")
    assert f"    engine: {gitops}\n" in text
    # its runs join the budget: the example's 16h deadline no longer holds the worst case
    # (NVC313, test_plan_budgets_its_fixed_time), so this site allows 20h
    text = text.replace("deadline: 16h,", "deadline: 20h,")
    root = EXAMPLE.parents[3]
    result = compile_source(text.encode(), "sites/lab.yaml", catalog(), Options(root=root))
    errors = [f"{d.code}: {d.message}" for d in result.diagnostics if d.is_error]
    assert result.tree is not None and not errors, errors
    runs = [t for t in result.tree.values() if "mark=@@nvcregen-linkctr" in t]
    assert runs, "the link counters script is in the tree"


@pytest.mark.slow
def test_its_runs_count_in_the_plans_budget() -> None:
    root = EXAMPLE.parents[3]
    plain = without_packing(EXAMPLE.read_text())
    before = compile_source(plain.encode(), "sites/lab.yaml", catalog(), Options(root=root))
    assert not [d for d in before.diagnostics if d.code == "NVC313"]
    after = compile_source(site_text().encode(), "sites/lab.yaml", catalog(), Options(root=root))
    (over,) = [d for d in after.diagnostics if d.code == "NVC313"]
    assert "past the deadline of 16h" in over.message


def test_catalog_list_says_it_runs_in_trainer_mode_only() -> None:
    result = CliRunner().invoke(main, ["catalog", "list"])
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("link-counters ")]
    assert "trainer only" in row
    (pair,) = [line for line in result.stdout.splitlines() if line.startswith("rdma-rails-pair ")]
    assert "trainer only" in pair  # NVCRE mode refuses it too (NVC344)
    (rails,) = [line for line in result.stdout.splitlines() if line.startswith("rdma-rails ")]
    assert "WorkloadRun" in rails  # a kind NVCRE mode judges keeps its WorkloadRun form


def test_the_expected_duration_holds_the_traffic() -> None:
    """Review: a catalog entry whose expectedDuration was the traffic or less budgeted a
    run shorter than its own traffic; exactly the traffic is refused, a second more passes."""
    one = {"counter": "x", "maxDelta": 0, "sources": ["s"]}
    with pytest.raises(ValueError, match=r"longer than trafficDuration \(60s <= 60s\)"):
        LinkCountersParams.model_validate(
            {"limits": [one], "trafficDuration": "60s", "expectedDuration": "60s"}
        )
    LinkCountersParams.model_validate(
        {"limits": [one], "trafficDuration": "60s", "expectedDuration": "61s"}
    )


@pytest.mark.parametrize(("timeout", "refused"), [("180s", False), ("179s", True), ("1h", False)])
def test_a_timeout_that_cuts_the_traffic_short_is_refused_nvc791(
    timeout: str, refused: bool
) -> None:
    """60 s of traffic needs 180 s of timeout: 60 + 30 to connect + 30 for the
    after-snapshot + the 60 s the outer deadline keeps; 179 s gives the traffic 89 s."""
    text = site_text().replace(STAGE, STAGE.replace("tests: [", f"timeoutPerJob: {timeout}\n"
                               "        tests: ["), 1)  # fmt: skip
    site, doc = parse(text)
    found = [d for d in check_plan(plan_of(site, doc))
             if d.code == "NVC791"]  # fmt: skip
    assert bool(found) == refused
    if refused:
        (one,) = found
        assert one.path == "/spec/readiness/stages/0/timeoutPerJob"
        assert one.span.line == text[: text.index(f"timeoutPerJob: {timeout}")].count("\n") + 1
        assert one.message == (
            "timeoutPerJob 179s is too short for link-counters in stage single-node: its"
            " traffic runs 60 s and needs 180 s of run timeout (60 s + 30 s to connect + 30 s"
            " for the after-snapshot + the 60 s the outer deadline keeps); 179 s gives the"
            " traffic 89 s: every node's traffic would be cut short and fail"
        )
        assert one.hint.startswith("raise the stage's timeoutPerJob")


def test_a_derived_timeout_too_short_is_refused_at_the_test() -> None:
    test = catalog().tests["link-counters"]
    assert kind_of(test).timeout_gap(test, 180_000) is None
    assert kind_of(test).timeout_gap(test, 179_999) is not None  # whole seconds count
    site, doc = parse(site_text())
    (unit,) = [u for u in plan(site, catalog()) if u.test.name == "link-counters"]
    (found,) = kind_timeout_problems(doc, [replace(unit, timeout_ms=120_000)])
    assert found.path == "/spec/readiness/stages/0/tests/0"
    assert found.message.startswith("the run timeout 2m (expected x timeoutFactor) is too short")
    assert found.hint == "set the stage's timeoutPerJob, or raise readiness.window.timeoutFactor"
    assert kind_timeout_problems(doc, [unit]) == []
