"""Issue #31: the network NCCL selected, and the plugins that failed, per host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvcregen.cli import main
from nvcregen.ingest.transport import detect_transports
from nvcregen.kinds.nccl.models import PluginFailure
from nvcregen.kinds.nccl.reader import parse_nccl

ROOT = Path(__file__).resolve().parents[3]
H200 = ROOT / "tests" / "fixtures" / "nccl-h200-1gpu" / "all_reduce_perf.log"
ONE_NODE = "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0"
IB_FAILED = "NCCL's IB network plugin failed to initialize"


def test_a_single_gpu_run_reports_the_network_it_selected_and_the_plugin_that_failed() -> None:
    (run,) = parse_nccl(H200.read_text(), "h200")  # real: NCCL 2.28.9 on a VM with no HCA
    assert (run.status, run.transports) == ("ok", ())  # nothing crossed a network
    assert run.networks == ("Socket",)
    assert run.plugin_failures == (PluginFailure("vm", "IB"),)
    assert run.warnings == (f"NVC824: vm: {IB_FAILED} (check the node's RDMA devices and"
                            " drivers if the run needed them)",)  # fmt: skip
    result = CliRunner().invoke(main, ["ingest", "nccl", str(H200)])
    assert result.exit_code == 0  # a finding about the node, not a failed run
    first = result.stdout.splitlines()[0]
    assert first.endswith(
        "ok; transport none crossed a network (NCCL selected Socket); avg busbw 0 GB/s"
    )
    assert f"warning: NVC824: vm: {IB_FAILED}" in result.stdout
    doc = json.loads(
        CliRunner().invoke(main, ["ingest", "nccl", str(H200), "--format", "json"]).stdout
    )
    (item,) = doc["runs"]
    assert (item["transports"], item["networks"]) == ([], ["Socket"])
    assert item["plugin_failures"] == [{"host": "vm", "plugin": "IB"}]


@pytest.mark.parametrize(
    ("init", "network"),
    [
        (["h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
          "h:1:2 [0] NCCL INFO Using network IB"], "IB"),
        (["h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
          "h:1:2 [0] NCCL INFO Using network Socket"], "Socket"),
        (["h:1:2 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws",
          "h:1:2 [0] NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)"],
         "AWS Libfabric"),
        (["h:1:2 [0] NCCL INFO NET/OFI Using Libfabric version 1.21",
          "h:1:2 [0] NCCL INFO Using network AWS Libfabric"], "AWS Libfabric"),
    ],
)  # fmt: skip
def test_single_node_communicators_keep_the_network_selected(init: list[str], network: str) -> None:
    info = detect_transports([*init, ONE_NODE])
    assert (info.transports, info.networks, info.failed_plugins) == ((), (network,), ())
    crossed = detect_transports([*init, ONE_NODE.replace("nNodes 1", "nNodes 2")])
    assert crossed.transports == crossed.networks == (network,)


def test_each_failed_plugin_is_named_with_its_host() -> None:
    lines = [
        "node-a:11:12 [0] NCCL INFO Failed to initialize NET plugin IB",
        "node-b.dc1:21:22 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.0.0.2<0>",
        "node-a:11:12 [0] NCCL INFO Failed to initialize NET plugin IB",  # once per host
        "NCCL INFO Failed to initialize NET plugin AWS Libfabric",  # no host printed
        "node-a:11:12 [0] NCCL INFO Using network Socket",
    ]
    info = detect_transports(lines)
    assert info.failed_plugins == (("node-a", "IB"), ("", "AWS Libfabric"))
    assert info.networks == ("Socket",)
    assert PluginFailure("", "IB").message.startswith("NVC824: a host the log does not name: ")


def test_a_plugin_failure_read_through_a_launcher_prefix_names_the_node() -> None:
    text = H200.read_text().replace(
        "vm:656:656 [0] NCCL INFO Failed", "0: gpu-07:656:656 [0] NCCL INFO Failed"
    )
    (run,) = parse_nccl(text, "srun")
    assert run.plugin_failures == (PluginFailure("gpu-07", "IB"),)
    clean = "\n".join(
        line for line in H200.read_text().splitlines() if "Failed to initialize" not in line
    )
    (healthy,) = parse_nccl(clean, "clean")
    assert (healthy.plugin_failures, healthy.warnings, healthy.networks) == ((), (), ("Socket",))
