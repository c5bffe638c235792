"""Xid events in a kernel log, classified by NVIDIA's Xid catalogue.

The driver logs each GPU fault as `NVRM: Xid (PCI:0000:18:00): 79, pid=..., <text>`
(older drivers leave out `PCI:`). The catalogue (docs/design/0014-node-health.md cites
it) gives each code an immediate action; here an Xid whose action is to reset the GPU,
reboot the node or call support fails the node, and one that only ends the application
that caused it (a page fault in user code) is a warning worth a look.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nvcregen.core.errors import Span
from nvcregen.ingest.lines import strip_prefix
from nvcregen.kinds.node.models import XidEvent

MAX_EVENTS = 1000  # per file; a storm of one Xid is summarized by its first events
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})[^)]*\): "
    r"(?P<code>\d{1,4}),\s*(?P<detail>.*)$"
)
_DMESG_TIME = re.compile(r"^\[\s*\d+\.\d+\]\s*")
_NVRM = "NVRM:"


@dataclass(frozen=True)
class XidKind:
    """What an Xid means and whether it fails the node."""

    name: str
    fails: bool
    action: str


# NVIDIA's catalogue, in our words; `fails` where its immediate action is more than
# restarting the application (reset the GPU, reboot the node, or contact support)
XIDS: dict[int, XidKind] = {
    13: XidKind(
        "graphics engine exception",
        False,
        "usually the application (an out-of-range access); restart it, and look at the node "
        "if it recurs across jobs",
    ),
    31: XidKind(
        "GPU memory page fault",
        False,
        "usually the application's illegal address; restart it, and look at the node if it "
        "recurs across jobs",
    ),
    43: XidKind(
        "GPU stopped processing a channel", False, "the application's channel was reset; restart it"
    ),
    45: XidKind(
        "preemptive cleanup after an earlier error",
        False,
        "follows another fault or a killed process; read the Xid before it",
    ),
    48: XidKind(
        "double-bit ECC error", True, "reset the GPU; if it recurs, drain the node for repair"
    ),
    61: XidKind(
        "internal micro-controller breakpoint",
        True,
        "reset the GPU; report to NVIDIA support if it recurs",
    ),
    62: XidKind(
        "internal micro-controller halt",
        True,
        "reset the GPU; report to NVIDIA support if it recurs",
    ),
    63: XidKind(
        "row remapping or page retirement recorded",
        False,
        "a memory row was marked for remapping; it takes effect at the next GPU reset",
    ),
    64: XidKind(
        "row remapping or page retirement failed to record",
        True,
        "reset the GPU; a failure to record remaps needs repair (RMA)",
    ),
    68: XidKind("video decoder (NVDEC) exception", False, "usually the application; restart it"),
    74: XidKind(
        "NVLink error",
        True,
        "reset the GPU and check its NVLink connections; drain the node if it recurs",
    ),
    79: XidKind(
        "GPU has fallen off the bus",
        True,
        "the GPU is no longer reachable over PCIe: drain and reboot the node; check the "
        "slot, riser and power",
    ),
    92: XidKind(
        "high single-bit ECC error rate",
        False,
        "memory is correcting many errors; watch the row-remap counts",
    ),
    94: XidKind(
        "contained ECC error",
        False,
        "an uncorrectable error was contained to the application; restart it, and reset the "
        "GPU when idle to remap the row",
    ),
    95: XidKind(
        "uncontained ECC error",
        True,
        "every application on the GPU is affected: reset the GPU; drain the node if it recurs",
    ),
    119: XidKind(
        "GSP RPC timeout",
        True,
        "the GPU's system processor stopped answering: reset the GPU or reboot the node",
    ),
    120: XidKind(
        "GSP error",
        True,
        "the GPU's system processor reported an error: reset the GPU or reboot the node",
    ),
    154: XidKind(
        "GPU recovery action changed",
        True,
        "the driver asks for a GPU reset or a node reboot (its line names which): do it first",
    ),
}


def has_nvrm(text: str) -> bool:
    """Whether the text holds any NVIDIA kernel-module (`NVRM:`) line."""
    return _NVRM in text


def parse_xids(text: str, file: str, first_line: int = 1) -> list[XidEvent]:
    """Every `NVRM: Xid` line, in order, at most `MAX_EVENTS`.

    Args:
        text: Kernel log lines (`dmesg`, `journalctl -k`), prefixes allowed.
        file: The name to put in each event's span.
        first_line: The line number of the text's first line in `file`.

    """
    events: list[XidEvent] = []
    for number, raw in enumerate(text.splitlines(), start=first_line):
        if _NVRM not in raw:
            continue
        line = _DMESG_TIME.sub("", strip_prefix(raw))
        match = _XID.search(line)
        if match is None:
            continue
        column = raw.find("NVRM:") + 1
        events.append(
            XidEvent(
                int(match["code"]),
                match["pci"].lower(),
                match["detail"].strip()[:200],
                Span(file, number, column),
            )
        )
        if len(events) >= MAX_EVENTS:
            break
    return events
