"""NIC figures that look like unit slips (NVC387-389): where each points and its boundary."""

from __future__ import annotations

import pytest
from sitefactory import catalog, line_of, parse, site_yaml

from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.validate.site import check_site
from nvcregen.validate.slips import MAX_PORT_GBITS

STAGES = "- {name: node, scope: intra-node, tests: [dcgm-l1]}"


def pool(speed: str, count: int = 8) -> str:
    return f"""\
- name: h20
  model: H20-3e
  nodes: [node-a, node-b]
  nics: {{count: {count}, fabric: roce, speed: {speed}, resourceName: rdma/hca}}
"""


def slips(speed: str, count: int = 8) -> list[Diagnostic]:
    _, doc = parse(site_yaml(pools=pool(speed, count), stages=STAGES))
    found = check_site(doc, catalog()).diagnostics
    return [d for d in found if d.code in {"NVC387", "NVC388", "NVC389"}]


def test_a_nic_speed_in_bytes_is_an_error_at_its_line() -> None:
    # It rescaled the plan while only a warning: ceilings and durations of 1.6 Tb/s ports.
    (diag,) = slips("200GB/s")
    text = site_yaml(pools=pool("200GB/s"), stages=STAGES)
    assert (diag.code, diag.severity, diag.span.line) == (
        "NVC387",
        Severity.ERROR,
        line_of(text, "speed: 200GB/s"),
    )
    assert "1600 Gb/s per NIC port" in diag.message
    assert diag.hint == "write 200Gb/s: NIC ports are rated in bits (200Gb/s is 25 GB/s)"


def test_a_nic_speed_converted_to_bytes_is_told_its_port_rate() -> None:
    (diag,) = slips("25GB/s")  # a 200 Gb/s port, converted; 25 Gb/s ports exist too
    assert diag.severity == Severity.ERROR
    assert diag.hint == "write 200Gb/s (what 25 GB/s is), or 25Gb/s if the port is rated 25"
    (half,) = slips("12.5GB/s")
    assert half.hint == "write 100Gb/s (12.5 GB/s is 100Gb/s): NIC speeds are in bits"
    (both,) = slips("50GB/s")  # 400 Gb/s, and 50 Gb/s is a port rate too
    assert both.hint == "write 400Gb/s (what 50 GB/s is), or 50Gb/s if the port is rated 50"


@pytest.mark.parametrize("speed", ["200Gb/s", "400Gbps", "800Gb/s", "1Gb/s", "25Gb/s"])
def test_real_port_speeds_in_bits_pass(speed: str) -> None:
    assert slips(speed) == []


@pytest.mark.parametrize("speed", ["801Gb/s", "1600Gb/s", "0.5Gb/s", "100Mb/s"])
def test_speeds_no_port_has_warn(speed: str) -> None:
    (diag,) = slips(speed)
    assert diag.code == "NVC388"
    assert f"{MAX_PORT_GBITS:g} Gb/s" in diag.message


def test_more_than_two_nics_per_gpu_warns_at_the_count() -> None:
    assert slips("200Gb/s", 16) == []  # two per GPU: OCI's 16 HCAs for 8 H100s
    (diag,) = slips("200Gb/s", 17)
    assert (diag.code, diag.path) == ("NVC389", "/spec/nodePools/0/nics/count")
