"""Node-health pod logs as the `node-health` test prints them, from the 8-GPU fixture."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "node-health"
XML = (ROOT / "tests" / "fixtures" / "node" / "h200-8gpu" / "nvidia-smi-q.xml").read_text()


def health_log(node: str, xml: str = XML, kernel: str = "", *, end: bool = True) -> str:
    """One node's log: its begin marker, the XML and kernel sections, and (unless cut) end."""
    text = f"@@nvcregen-node-health begin node={node}\n@@nvcregen-node-health section=xml\n"
    text += xml + "@@nvcregen-node-health section=kernel\n" + kernel
    return text + ("@@nvcregen-node-health end rc=0\n" if end else "")
