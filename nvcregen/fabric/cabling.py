"""The operator's cabling map: which switch port each node's HCA is cabled to (pure).

No Kubernetes label states an HCA's switch port: NFD and the network operator label PCI
devices and RDMA capability, LLDP on NVOS InfiniBand switches runs on management ports
only, and an InfiniBand fabric's neighbours come from `ibnetdiscover` or UFM. So the
source is the operator's own map (a DCIM export, or one made from those tools), a CSV
`nvcregen inventory --cabling FILE` reads:

    node,hca,switch,port
    gpu-0007,mlx5_3,leaf-07,Ethernet1/12

A header row names the four columns (in any order; other columns are ignored), blank
lines and lines starting with `#` are skipped, and no field is quoted (no name holds a
comma). The file is untrusted: at most 16 MiB and 1,000,000 rows, every name checked,
each node one the inventory holds, each HCA listed once per node, each switch port
cabled once. Every problem is NVC790 at `file:line:column`; one problem writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from nvcregen.core import codes
from nvcregen.core.kube import node_name_problem
from nvcregen.fabric.inventory import Inventory, SwitchPort

BAD_CABLING = codes.NVC790.code
MAX_BYTES = 16 * 2**20
MAX_ROWS = 1_000_000
COLUMNS = ("node", "hca", "switch", "port")
HINT = (
    "a CSV with the header node,hca,switch,port and one row an HCA "
    "(gpu-0007,mlx5_3,leaf-07,Ethernet1/12)"
)
_HCA = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")  # as a pool's `nics.hcas` names them
_SWITCH = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")  # a label value
_PORT = re.compile(r"[A-Za-z0-9][-A-Za-z0-9_./:]{0,63}")  # Ethernet1/12, swp12s0, 1/12
SHOWN = 80  # characters of a bad field shown
_NAMED = {"hca": "an HCA", "switch": "a switch", "port": "a switch port"}


class CablingError(ValueError):
    """A cabling map refused; `problems` are `file:line:column: NVC790: ...` lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class _Field:
    text: str
    column: int


def name_problem(what: str, value: object) -> str | None:
    """Why `value` is not an HCA, switch or port name as the inventory keeps one."""
    pattern = {"hca": _HCA, "switch": _SWITCH, "port": _PORT}[what]
    if isinstance(value, str) and pattern.fullmatch(value):
        return None
    shown = repr(str(value)[:SHOWN]) + ("..." if len(str(value)) > SHOWN else "")
    return f"{shown} is not {_NAMED[what]} name"


def read_cabling(
    raw: bytes, path: str, nodes: Mapping[str, object]
) -> dict[str, dict[str, SwitchPort]]:
    """Each node's HCAs and their switch ports, from a cabling CSV's bytes.

    Raises:
        CablingError: Every problem found, each at its file:line:column.

    """
    if len(raw) > MAX_BYTES:
        raise CablingError([f"{path}: {BAD_CABLING}: over {MAX_BYTES // 2**20} MiB"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = raw[: exc.start].count(b"\n") + 1
        raise CablingError([f"{path}:{at}:1: {BAD_CABLING}: not UTF-8"]) from None
    reader = _Reader(path, nodes)
    for number, raw_line in enumerate(text.split("\n"), start=1):
        line = raw_line.removesuffix("\r")
        if line.strip() and not line.lstrip().startswith("#") and not reader.take(number, line):
            break
    if reader.header is None:
        reader.fail(1, 1, "no header row: nothing to read")
    if reader.problems:
        raise CablingError(reader.problems)
    return {n: dict(sorted(h.items())) for n, h in sorted(reader.found.items())}


class _Reader:
    """The rows read so far, the switch ports taken, and every problem."""

    def __init__(self, path: str, nodes: Mapping[str, object]) -> None:
        self.path = path
        self.nodes = nodes
        self.header: dict[str, int] | None = None
        self.rows = 0
        self.found: dict[str, dict[str, SwitchPort]] = {}
        self.taken: dict[SwitchPort, tuple[int, str, str]] = {}
        self.problems: list[str] = []

    def fail(self, line: int, column: int, message: str) -> None:
        self.problems.append(f"{self.path}:{line}:{column}: {BAD_CABLING}: {message}")

    def take(self, number: int, line: str) -> bool:
        """Read one line (the header or a row); False when nothing after it can be read."""
        fields = _fields(line)
        if self.header is None:
            self.header = {f.text.strip().lower(): i for i, f in enumerate(fields)}
            missing = [c for c in COLUMNS if c not in self.header]
            if missing:
                self.fail(number, 1, f"the header names no {', '.join(missing)} column")
                return False
            return True
        self.rows += 1
        if self.rows > MAX_ROWS:
            self.fail(number, 1, f"more than {MAX_ROWS} rows")
            return False
        if len(fields) <= max(self.header.values()):
            self.fail(
                number, 1, f"{len(fields)} fields, fewer than the header's {len(self.header)}"
            )
            return True
        self._row(number, *(fields[self.header[c]] for c in COLUMNS))
        return True

    def _row(self, number: int, node: _Field, hca: _Field, switch: _Field, port: _Field) -> None:
        for field, problem in (
            (node, node_name_problem(node.text)),
            (hca, name_problem("hca", hca.text)),
            (switch, name_problem("switch", switch.text)),
            (port, name_problem("port", port.text)),
        ):
            if problem is not None:
                self.fail(number, field.column, problem)
                return
        if node.text not in self.nodes:
            self.fail(number, node.column, f"node {node.text} is not in the inventory")
            return
        end = SwitchPort(switch.text, port.text)
        mine = self.found.setdefault(node.text, {})
        if hca.text in mine:
            self.fail(number, hca.column, f"node {node.text} HCA {hca.text} is listed twice")
            return
        if end in self.taken:
            was, other, other_hca = self.taken[end]
            self.fail(number, switch.column, f"{end} is cabled to {other} {other_hca} already"
                      f" (line {was}): a switch port holds one cable")  # fmt: skip
            return
        self.taken[end] = (number, node.text, hca.text)
        mine[hca.text] = end


def _fields(line: str) -> list[_Field]:
    """A line's comma-separated fields, each with its 1-based column."""
    fields: list[_Field] = []
    column = 1
    for part in line.split(","):
        fields.append(_Field(part, column))
        column += len(part) + 1
    return fields


def with_cabling(
    inventory: Inventory, cabling: Mapping[str, Mapping[str, SwitchPort]]
) -> Inventory:
    """The inventory with each node's HCAs' switch ports added."""
    nodes = {
        name: replace(node, cabling=dict(cabling[name])) if name in cabling else node
        for name, node in inventory.nodes.items()
    }
    return Inventory(inventory.source, nodes)
