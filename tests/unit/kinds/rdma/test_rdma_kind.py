"""The rdma kind (issue #36, item 2): catalog block, time, the loopback script, both engines."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rdmasamples import FAKE_TOOL, SAMPLE
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, of_kind, without_packing

from nvcregen.compile.readiness.nodescript import node_script
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.kindapi.protocol import FixedTime, NodeRun
from nvcregen.kindapi.registry import kind_of
from nvcregen.kinds.rdma.kind import KIND as RDMA
from nvcregen.kinds.rdma.kind import PORT_BASE
from nvcregen.kinds.rdma.logs import read_rails
from nvcregen.plan.resolve import plan
from nvcregen.validate.semantic import check_references

STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["


def rails_site(text: str) -> str:
    """The example trainer site with RDMA rails first in its intra-node stage."""
    assert STAGE in text
    return text.replace(STAGE, STAGE + "rdma-rails, ", 1)


def rails_unit(text: str):  # type: ignore[no-untyped-def]
    site, _ = parse(text)
    return site, next(u for u in plan(site, catalog()) if u.test.name == "rdma-rails")


def test_catalog_entry_and_fixed_time() -> None:
    test = catalog().tests["rdma-rails"]
    rdma = RDMA.block(test)
    assert (rdma.tool, rdma.message_size, rdma.use_cuda) == (
        "ib_write_bw",
        "8MiB",
        True,
    )
    assert rdma.floor == 0.95 and test.scopes == ["intra-node"]
    kind = kind_of(test)
    assert kind.fixed_time(test, "15s") == FixedTime(
        135.0, "15s start-up + ib_write_bw on every HCA 2m"
    )
    assert kind.duration_basis(test) == "ib_write_bw 8MiB per HCA, 2m"


def test_script_runs_each_hca_on_its_own_port_with_its_share_of_the_deadline() -> None:
    test = catalog().tests["rdma-rails"]
    run = NodeRun(gpus=8, timeout_ms=600_000, outer_deadline_s=540, hostengine=None,
                  hcas=("mlx5_0", "mlx5_1", "mlx5_2"))  # fmt: skip
    found = kind_of(test).node_script(test, run)
    assert found is not None and found.template == "rdma-rails.sh.j2"
    assert found.values["hcas"] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert found.values["rail_deadline_s"] == 180  # 540 s shared by three rails
    assert found.values["size"] == 8 * 1024 * 1024 and found.values["port_base"] == PORT_BASE
    assert found.values["duration_s"] is None and found.values["iterations"] == 5000
    assert found.values["floor_gbps"] is None  # no line rate given: the script judges none
    judged = kind_of(test).node_script(test, NodeRun(8, 600_000, 540, None, ("mlx5_0",), 400.0))
    assert judged is not None and judged.values["floor_gbps"] == 380.0
    single = kind_of(test).node_script(test, NodeRun(8, 600_000, 1, None))
    assert single is not None and single.values["rail_deadline_s"] == 1  # never 0


def test_rendered_script_names_every_hca_and_uses_gpu_memory() -> None:
    site, unit = rails_unit(rails_site(without_packing(EXAMPLE.read_text())))
    script = node_script(site, unit)
    assert "for hca in mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7; do" in script
    assert 'args+=(--use_cuda="$gpu")' in script
    assert "-s 8388608" in script and "-n 5000" in script and "--report_gbits" in script
    assert '"${args[@]}" 127.0.0.1' in script  # the client, after the server listens
    assert 'echo "$mark rail begin hca=$hca gpu=$gpu numa=$numa"' in script
    if (bash := shutil.which("bash")) is not None:
        assert subprocess.run([bash, "-n", "-c", script], check=False).returncode == 0


def test_trainer_job_holds_the_nics_locks_memory_and_joins_the_pod_network() -> None:
    found = compiled(rails_site(without_packing(EXAMPLE.read_text())))
    jobs = of_kind(found, "Job", "rdma-rails")
    assert jobs, "one Job per round and node"
    pod = jobs[0]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["name"] == "rdma-rails"
    assert container["resources"]["limits"]["rdma/hca"] == 8
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    networks = pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    assert networks == "roce-0,roce-1,roce-2,roce-3,roce-4,roce-5,roce-6,roce-7"
    dcgm = of_kind(found, "Job", "dcgm-l1")[0]["spec"]["template"]
    assert "securityContext" not in dcgm["spec"]["containers"][0]  # other per-node kinds as before
    assert "rdma/hca" not in dcgm["spec"]["containers"][0]["resources"]["limits"]


def test_nvcre_form_is_a_workloadrun_running_the_script_on_each_node() -> None:
    text = rails_site(without_packing(EXAMPLE.read_text())).replace("    engine: trainer\n", "")
    site, unit = rails_unit(text)
    runs = [m.obj for m in readiness_manifests(site, [unit]) if m.kind == "WorkloadRun"]
    assert len(runs) == 1
    spec = runs[0]["spec"]
    command = spec["framework"]["exec"]["command"]
    assert command[:2] == ["/bin/bash", "-c"] and "ib_write_bw" in command[2]
    assert spec["resources"]["limits"]["rdma/hca"] == 8


def test_inter_node_scope_is_refused_by_the_catalog_scopes() -> None:
    text = without_packing(EXAMPLE.read_text()).replace(
        "tests: [nccl-all-reduce, nccl-all-gather, nccl-alltoall, nccl-all-reduce-tcp]",
        "tests: [rdma-rails]",
    )
    site, doc = parse(text)
    found = [d for d in check_references(site, catalog(), doc) if d.code == "NVC303"]
    assert [d.message for d in found] == ["test 'rdma-rails' does not run at scope inter-node"]
    assert found[0].hint == "it runs at: intra-node"


def test_a_pool_naming_no_hcas_is_refused_nvc833() -> None:
    text = rails_site(without_packing(EXAMPLE.read_text()))
    hcas = "        hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7]\n"
    assert hcas in text
    site, doc = parse(text)
    assert not [d for d in check_references(site, catalog(), doc) if d.code == "NVC833"]
    site, doc = parse(text.replace(hcas, ""))
    (found,) = [d for d in check_references(site, catalog(), doc) if d.code == "NVC833"]
    assert (
        found.message == "rdma-rails measures each RDMA NIC, but pool 'h20' names none in nics.hcas"
    )


def test_a_node_pack_holding_rdma_rails_locks_memory_and_joins_the_pod_network() -> None:
    found = compiled(rails_site(EXAMPLE.read_text()).replace("packing: perRun", "packing: packed"))
    (job, *_) = [o for o in of_kind(found, "Job") if "rdma-rails" in str(o["spec"]["template"])]
    pod = job["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert container["resources"]["limits"]["rdma/hca"] == 8
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].startswith("roce-0,")
    plain = compiled(EXAMPLE.read_text().replace("packing: perRun", "packing: packed"))
    for other in of_kind(plain, "Job"):  # a pack without it or NCCL ranks is as before
        tests = other["metadata"]["annotations"]["nvcregen.io/tests"]
        locks = "securityContext" in other["spec"]["template"]["spec"]["containers"][0]
        assert locks == ("nccl" in tests), tests  # NCCL ranks lock memory (test_packed.py)


@pytest.mark.parametrize(("speed", "exit_code"), [("200Gb/s", 1), ("145Gb/s", 0)])
def test_the_script_runs_a_server_first_then_each_rail(
    tmp_path: Path, speed: str, exit_code: int
) -> None:
    bash, python = shutil.which("bash"), shutil.which("python3")
    if bash is None or python is None or not Path("/proc/net/tcp").exists():
        pytest.skip("needs bash, python3 and /proc/net/tcp")
    text = rails_site(without_packing(EXAMPLE.read_text()))
    site, unit = rails_unit(text.replace("speed: 200Gb/s", f"speed: {speed}"))
    every = "for hca in mlx5_0 mlx5_1 mlx5_2 mlx5_3 mlx5_4 mlx5_5 mlx5_6 mlx5_7; do"
    script = node_script(site, unit).replace(every, "for hca in mlx5_0 mlx5_1; do")
    tool = tmp_path / "ib_write_bw"
    tool.write_text(FAKE_TOOL.replace("#!/usr/bin/env python3", f"#!{python}"))
    tool.chmod(0o755)
    (tmp_path / "ib_write_bw.out").write_text(SAMPLE.read_text())
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7; do echo 00000000:1$i:00.0; done\n")
    smi.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "NODE_NAME": "gpu-07", "POD_NAME": "rails-x7k2p"}
    done = subprocess.run([bash, "-c", script], env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == exit_code, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(
        r"@@nvcregen-rdma begin node=gpu-07 pod=rails-x7k2p start=\d{4}-\d\d-\d\dT[\d:]{8}Z",
        lines[0],
    )
    assert "@@nvcregen-rdma rail begin hca=mlx5_0 gpu=0 numa=-1" in lines
    assert "@@nvcregen-rdma rail end hca=mlx5_1 rc=0 server_rc=0" in lines
    assert lines[-1] == f"@@nvcregen-rdma end rc={exit_code}"  # below the floor: 1
    below = "nvcregen: mlx5_1 140.40 Gb/s at 8388608 B, below 190.0 Gb/s"
    assert (below in lines) == (exit_code == 1)
    client = next(line for line in lines if line.startswith("args: -d mlx5_1"))
    assert client == (
        f"args: -d mlx5_1 -p {PORT_BASE + 1} -F --report_gbits -s 8388608 -q 1 -n 5000 "
        "--use_cuda=1 127.0.0.1"
    )
    record = read_rails(done.stdout, {"nodes": ("gpu-07",)}, unit)
    assert record["errors"][-1].startswith("gpu-07 mlx5_7: no rail measured")
    floor = (
        "NVC832: gpu-07 mlx5_0: 140.40 Gb/s at 8MiB, below the floor 190 Gb/s (0.95 of 200 Gb/s)"
    )
    assert (record["errors"][0] == floor) == (exit_code == 1)
