"""The nvbandwidth kind (issue #36, item 1): its block, script, physics and catalog floors."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from nvcregen.catalog.load import load_catalog
from nvcregen.catalog.models import HardwareEntry
from nvcregen.compile.templating import render_packaged
from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, NodeRun
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.kinds.nvbandwidth.kind import KIND as NVBANDWIDTH
from nvcregen.kinds.nvbandwidth.params import NvbandwidthFloor, NvbandwidthParams
from nvcregen.kinds.nvbandwidth.physics import Ceilings, ceilings, direction, floor_problems


def entry() -> object:
    return load_catalog().tests["nvbandwidth"]


def model_ceilings(hardware: HardwareEntry) -> Ceilings:
    assert hardware.pcie_gen is not None, hardware.model
    rates = {r.gen: r.rate for r in load_catalog().physics.pcie_x16}
    pcie = units.parse_bandwidth(rates[hardware.pcie_gen]).gbytes_per_s
    return ceilings(hardware.pcie_gen, pcie, hardware.nvlink_bandwidth)


def test_the_catalog_entry_is_a_per_node_kind_with_its_own_log() -> None:
    test = load_catalog().tests["nvbandwidth"]
    kind = kind_of(test)
    assert (kind.name, kind.per_node, kind.one_node, kind.collective) == (
        "nvbandwidth",
        True,
        True,
        False,
    )
    assert (kind.log_format, kind.node_container, kind.pod_size) == (
        "nvbandwidth",
        "nvbandwidth",
        "dcgm",
    )
    assert test.nvcre is None  # NVCRE 0.7.0 has no such category: a WorkloadRun
    assert kind is NVBANDWIDTH
    nvbw = NVBANDWIDTH.block(test)
    assert nvbw.testcases == [
        "host_to_device_memcpy_ce",
        "device_to_host_memcpy_ce",
        "device_to_device_memcpy_read_ce",
        "device_to_device_memcpy_write_ce",
    ]
    assert (nvbw.buffer_size_mib, nvbw.iterations, nvbw.expected_duration) == (512, 10, "5m")


def test_its_time_is_a_pod_start_plus_the_catalogs_duration() -> None:
    test = load_catalog().tests["nvbandwidth"]
    assert kind_of(test).fixed_time(test, "15s") == FixedTime(
        315.0, "15s start-up + nvbandwidth 4 testcases 5m"
    )
    assert kind_of(test).duration_basis(test) == "4 testcases 5m"


def test_the_script_names_the_node_runs_under_a_deadline_and_asks_for_json() -> None:
    test = load_catalog().tests["nvbandwidth"]
    run = NodeRun(gpus=8, timeout_ms=900_000, outer_deadline_s=840, hostengine=None)
    script = kind_of(test).node_script(test, run)
    assert script is not None
    assert script.package == "nvcregen.kinds.nvbandwidth"  # its template is the package's own
    text = render_packaged(script.package, script.template, **script.values)
    lines = text.splitlines()
    assert 'echo "@@nvcregen-nvbandwidth begin node=${NODE_NAME:?NODE_NAME is not set}\\' in lines
    assert 'timeout --kill-after=10s 840s "$bin" -b 512 -i 10 \\' in lines
    assert (
        "  -t host_to_device_memcpy_ce device_to_host_memcpy_ce"
        " device_to_device_memcpy_read_ce device_to_device_memcpy_write_ce $json"
    ) in lines
    assert "if timeout 30s \"$bin\" --help 2>&1 | grep -q -- '--json'; then json=-j; fi" in lines
    assert "bin=nvbandwidth" in lines
    assert lines[-1] == 'exit "$rc"'
    env = [e["name"] for e in kind_of(test).node_env()]
    assert env == ["NODE_NAME", "POD_NAME"]


@pytest.mark.parametrize(
    ("testcase", "way"),
    [
        ("host_to_device_memcpy_ce", "hostToDevice"),
        ("host_to_all_memcpy_sm", "hostToDevice"),
        ("device_to_host_memcpy_sm", "deviceToHost"),
        ("all_to_host_memcpy_ce", "deviceToHost"),
        ("device_to_device_memcpy_read_ce", "deviceToDevice"),
        ("device_to_device_memcpy_write_sm", "deviceToDevice"),
        ("host_to_device_bidirectional_memcpy_ce", None),
        ("device_to_device_bidirectional_memcpy_read_ce", None),
        ("all_to_one_write_ce", None),
        ("host_device_latency_sm", None),
        ("device_local_copy", None),
        ("host_to_device_memcpy_ce_extra", None),
    ],
)
def test_only_one_way_testcases_have_a_direction(testcase: str, way: str | None) -> None:
    assert direction(testcase) == way


def test_ceilings_are_the_pcie_link_and_half_the_nvlink_figure() -> None:
    catalog = load_catalog()
    h100 = model_ceilings(catalog.hardware["h100"])
    assert (h100.host, h100.device) == (63.0, 450.0)
    l20 = model_ceilings(catalog.hardware["l20"])
    assert (l20.host, l20.device) == (31.5, 31.5)
    assert l20.device_link == "PCIe gen 4 x16 31.5 GB/s per direction (no NVLink)"


def test_every_catalog_floor_names_a_model_with_a_pcie_generation_and_fits_it() -> None:
    catalog = load_catalog()
    nvbw = NVBANDWIDTH.block(catalog.tests["nvbandwidth"])
    assert [f.model for f in nvbw.floors] == ["H100", "H20", "L20"]
    for floor in nvbw.floors:
        hardware = catalog.find_hardware(floor.model)
        assert hardware is not None, floor.model
        assert floor_problems(floor, model_ceilings(hardware)) == [], floor.model


def test_a_floor_is_refused_exactly_above_its_ceiling() -> None:
    limits = ceilings(5, 63.0, "900GB/s")
    at = NvbandwidthFloor.model_validate(
        {
            "model": "X",
            "hostToDevice": "63GB/s",
            "deviceToHost": "1GB/s",
            "deviceToDevice": "450GB/s",
            "sources": ["s"],
        }
    )
    assert floor_problems(at, limits) == []
    over = at.model_copy(update={"host_to_device": "63.01GB/s", "device_to_device": "451GB/s"})
    assert floor_problems(over, limits) == [
        "X: hostToDevice floor 63.01 GB/s is above what PCIe gen 5 x16 63 GB/s"
        " per direction carries",
        "X: deviceToDevice floor 451 GB/s is above what NVLink 450 GB/s per direction carries",
    ]


def test_a_testcase_or_a_models_floor_named_twice_is_refused() -> None:
    base = {"testcases": ["a", "a"], "expectedDuration": "1m"}
    with pytest.raises(ValidationError, match=r"each testcase is named once \(twice: a\)"):
        NvbandwidthParams.model_validate(base)
    floor = {"model": "H100", "hostToDevice": "1GB/s", "deviceToHost": "1GB/s", "sources": ["s"]}
    twice = {"testcases": ["a"], "expectedDuration": "1m", "floors": [floor, floor]}
    with pytest.raises(ValidationError, match=r"each model in floors is named once"):
        NvbandwidthParams.model_validate(twice)
    once = NvbandwidthParams.model_validate({**twice, "floors": [floor]})
    assert once.floor("H100") is not None
    assert once.floor("H20") is None


def test_the_kind_is_registered_under_its_name() -> None:
    assert KINDS["nvbandwidth"].name == "nvbandwidth"
