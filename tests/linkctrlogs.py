"""Link counter logs for the tests, built from the public captures (PROVENANCE.md there).

Each capture becomes the lines the link-counters script prints for it: `ctr HCA PORT
GROUP NAME VALUE`, one a counter, as `head -c 64 FILE` (sysfs) and the script's awk over
`ethtool -S` would print them.
"""

from __future__ import annotations

import re
from pathlib import Path

CAPTURES = Path(__file__).resolve().parent / "fixtures" / "captures" / "linkcounters"
MARK = "@@nvcregen-linkctr"


def gpud_counters() -> dict[str, str]:
    """gpud #943's mlx5_1 port 1 `counters/`: name -> value, as `cat` printed each file."""
    text = (CAPTURES / "gpud-943-mlx5_1-counters.txt").read_text()
    return dict(re.findall(r"^=== \./(\S+) ===\n(.*)$", text, re.MULTILINE))


def grep_values(name: str) -> dict[str, str]:
    """A `grep . DIR/*` capture (`path:value` lines): file name -> value."""
    found: dict[str, str] = {}
    for line in (CAPTURES / name).read_text().splitlines():
        if (match := re.match(r"^.*/([^/:]+):(.*)$", line)) is not None:
            found[match.group(1)] = match.group(2)
    return found


def ethtool_values(name: str) -> dict[str, str]:
    """An `ethtool -S` capture: statistic -> value."""
    pairs = (line.strip().split(": ", 1) for line in (CAPTURES / name).read_text().splitlines())
    return {pair[0]: pair[1] for pair in pairs}


def ctr_lines(hca: str, port: int, group: str, values: dict[str, str]) -> str:
    """The script's lines of one port's group."""
    return "".join(f"ctr {hca} {port} {group} {n} {v}\n" for n, v in values.items())


def snapshot(phase: str, epoch: int, ports: dict[tuple[str, int], str], ended: bool = True) -> str:
    """One snapshot: each port's line and its counter lines."""
    text = f"@@linkctr snapshot {phase} epoch={epoch}\n"
    for (hca, port), body in ports.items():
        text += f"@@linkctr port {hca} {port} layer=InfiniBand state=4\n{body}"
    return text + (f"@@linkctr snapshot end {phase}\n" if ended else "")


def link_log(
    before: dict[tuple[str, int], str],
    after: dict[tuple[str, int], str] | None,
    *,
    seconds: int = 3600,
    node: str = "gpu-00",
    traffic: dict[str, int] | None = None,
    ended: bool = True,
    pod: str = "linkctr-x7k2p",
    start: str = "2026-12-06T09:19:12Z",
) -> str:
    """A whole log: begin line, before, traffic per HCA (rc 0 unless given), after, end."""
    text = f"{MARK} begin node={node} pod={pod} start={start}\n"
    text += snapshot("before", 1_765_000_000, before)
    hcas = dict.fromkeys(h for h, _ in before)
    for hca in hcas:
        text += f"@@linkctr traffic {hca} rc={(traffic or {}).get(hca, 0)} server_rc=0\n"
    if after is not None:
        text += snapshot("after", 1_765_000_000 + seconds, after, ended)
    return text + (f"{MARK} end rc=0\n" if ended else "")


def grown(values: dict[str, str], **by: int) -> dict[str, str]:
    """The same counters, some grown by the amounts given."""
    return {n: str(int(v) + by[n]) if n in by else v for n, v in values.items()}


HCAS = tuple(f"mlx5_{i}" for i in range(8))


def healthy_counters() -> dict[str, str]:
    """gpud's port with its four saturated counters as a fresh port shows them (0).

    gpud's excessive_buffer_overrun_errors is 15: the 4-bit counter's largest value.
    """
    stopped = ("link_downed", "port_xmit_discards", "port_xmit_wait")
    return gpud_counters() | dict.fromkeys((*stopped, "excessive_buffer_overrun_errors"), "0")


def every_port(values: dict[str, str], hcas: tuple[str, ...] = HCAS) -> dict[tuple[str, int], str]:
    """Port 1 of each HCA with the same counters."""
    return {(h, 1): ctr_lines(h, 1, "counters", values) for h in hcas}


def passing_body(node: str, pod: str, start: str) -> str:
    """A passing link counters run of the eight HCAs: nothing grew in its 75 s."""
    ports = every_port(healthy_counters())
    return link_log(ports, ports, seconds=75, node=node, pod=pod, start=start)
