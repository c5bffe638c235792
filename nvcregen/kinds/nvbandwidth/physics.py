"""What an nvbandwidth figure can be: each testcase's direction, a model's floors and ceilings.

Host<->device copies cross the GPU's x16 PCIe link, so no one-way copy exceeds that link's
per-direction rate (the catalog's `physics.yaml` table, by the model's PCIe generation).
Device<->device copies cross NVLink where the model has it (half its datasheet figure,
which counts both directions), else PCIe. Only one-way, one-GPU-at-a-time testcases are
held to a floor: bidirectional ones measure one direction under the other's load,
`all_to_one`/`one_to_all` sum several links, latency is in ns and a local copy never
leaves the GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from nvcregen.core import units
from nvcregen.kinds.nvbandwidth.params import NvbandwidthFloor

Direction = Literal["hostToDevice", "deviceToHost", "deviceToDevice"]
WAYS: tuple[Direction, ...] = ("hostToDevice", "deviceToHost", "deviceToDevice")

_DIRECTIONS: tuple[tuple[re.Pattern[str], Direction], ...] = (
    (re.compile(r"^(host_to_device|host_to_all)_memcpy_(ce|sm)$"), "hostToDevice"),
    (re.compile(r"^(device_to_host|all_to_host)_memcpy_(ce|sm)$"), "deviceToHost"),
    (re.compile(r"^device_to_device_memcpy_(read|write)_(ce|sm)$"), "deviceToDevice"),
)


def direction(testcase: str) -> Direction | None:
    """The direction a testcase's figures measure, or None when no floor applies to it."""
    return next((d for pattern, d in _DIRECTIONS if pattern.match(testcase)), None)


@dataclass(frozen=True)
class Ceilings:
    """The most one copy can carry one way, GB/s (None: not known), and the links in words."""

    host: float | None
    device: float | None
    host_link: str
    device_link: str

    def of(self, way: Direction) -> float | None:
        """The ceiling of a direction (None: no bound is known, none is applied)."""
        return self.device if way == "deviceToDevice" else self.host


def ceilings(pcie_gen: int | None, pcie_gbs: float | None, nvlink: str | None) -> Ceilings:
    """A model's ceilings from its PCIe x16 rate (GB/s one way) and NVLink figure, if any.

    A model whose PCIe generation the catalog does not state has no host ceiling: a guessed
    generation would call a faster link's honest figures impossible and fail the node.
    """
    if pcie_gen is None or pcie_gbs is None:
        host_link, host = "a host link the catalog does not state", None
    else:
        host_link, host = f"PCIe gen {pcie_gen} x16 {pcie_gbs:g} GB/s per direction", pcie_gbs
    if nvlink is None:
        return Ceilings(host, host, host_link, host_link + " (no NVLink)")
    rate = units.parse_bandwidth(nvlink).gbytes_per_s / 2
    return Ceilings(host, rate, host_link, f"NVLink {rate:g} GB/s per direction")


def floor_of(floor: NvbandwidthFloor, way: Direction) -> float | None:
    """A floor's bound of one direction, GB/s (None where it states none)."""
    text = {
        "hostToDevice": floor.host_to_device,
        "deviceToHost": floor.device_to_host,
        "deviceToDevice": floor.device_to_device,
    }[way]
    return None if text is None else units.parse_bandwidth(text).gbytes_per_s


def floor_problems(floor: NvbandwidthFloor, limits: Ceilings) -> list[str]:
    """Each direction whose floor no link of the model can carry, in words."""
    found = []
    for way in WAYS:
        bound, ceiling = floor_of(floor, way), limits.of(way)
        if bound is not None and ceiling is not None and bound > ceiling + 1e-9:
            link = limits.device_link if way == "deviceToDevice" else limits.host_link
            found.append(f"{floor.model}: {way} floor {bound:g} GB/s is above what {link} carries")
    return found
