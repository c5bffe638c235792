"""The text and Markdown forms of `nvcregen ingest node`: per node, its facts and findings."""

from __future__ import annotations

from nvcregen.kinds.node.files import NodeIngest
from nvcregen.kinds.node.models import GpuFacts, NodeReport


def _value(value: object) -> str:
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _pcie(gpu: GpuFacts) -> str:
    gen = f"gen {_value(gpu.pcie_gen)}/{_value(gpu.pcie_gen_max)}"
    return f"{gen} x{_value(gpu.pcie_width)}/x{_value(gpu.pcie_width_max)}"


def _ecc(gpu: GpuFacts) -> str:
    volatile = _pair(gpu.dram_unc_volatile, gpu.sram_unc_volatile, gpu.unc_volatile_total)
    aggregate = _pair(gpu.dram_unc_aggregate, gpu.sram_unc_aggregate, gpu.unc_aggregate_total)
    return f"{_value(gpu.ecc_current)}, uncorrectable volatile {volatile}, aggregate {aggregate}"


def _pair(dram: int | None, sram: int | None, total: int | None) -> str:
    if dram is None and sram is None:
        return _value(total)
    return f"DRAM {_value(dram)} SRAM {_value(sram)}"


def _remap(gpu: GpuFacts) -> str:
    text = (
        f"rows {_value(gpu.remapped_correctable)}+{_value(gpu.remapped_uncorrectable)},"
        f" pending {_value(gpu.remap_pending)}, failure {_value(gpu.remap_failure)}"
    )
    if gpu.histogram:
        text += ", banks " + " ".join(f"{name}:{banks}" for name, banks in gpu.histogram)
    return text


def _clocks(gpu: GpuFacts) -> str:
    active = [
        name
        for name, on in (
            ("hw-slowdown", gpu.hw_slowdown),
            ("hw-thermal", gpu.hw_thermal_slowdown),
            ("power-brake", gpu.hw_power_brake),
            ("sw-thermal", gpu.sw_thermal_slowdown),
        )
        if on
    ]
    known = any(
        v is not None for v in (gpu.hw_slowdown, gpu.hw_thermal_slowdown, gpu.hw_power_brake)
    )
    return ", ".join(active) if active else ("none" if known else "?")


def _temperature(gpu: GpuFacts) -> str:
    headroom = (
        "" if gpu.slowdown_headroom is None else f" ({gpu.slowdown_headroom} C below slowdown)"
    )
    return f"{_value(gpu.temperature)} C{headroom}"


def _gpu_rows(gpu: GpuFacts) -> list[tuple[str, str]]:
    return [
        ("product", _value(gpu.product)),
        ("VBIOS", _value(gpu.vbios)),
        ("PCIe", _pcie(gpu)),
        ("ECC", _ecc(gpu)),
        (
            "retired pages",
            f"SBE {_value(gpu.retired_sbe)}, DBE {_value(gpu.retired_dbe)}, pending "
            f"{_value(gpu.retired_pending)}",
        ),
        ("row remapping", _remap(gpu)),
        ("clock events", _clocks(gpu)),
        ("MIG", _value(gpu.mig_current)),
        ("temperature", _temperature(gpu)),
    ]


def _head(node: NodeReport) -> str:
    return (
        f"{node.node}: {node.verdict} (driver {_value(node.driver)}, CUDA {_value(node.cuda)},"
        f" {len(node.gpus)} GPUs, {len(node.xids)} Xid events)"
    )


def render_node_text(result: NodeIngest) -> str:
    """Each node's verdict line, its GPUs' facts, then its findings with their places."""
    out: list[str] = []
    for node in result.nodes:
        out.append(_head(node))
        for gpu in node.gpus:
            out.append(f"  GPU {gpu.index} {gpu.bus_id}")
            out += [f"    {label:<14} {text}" for label, text in _gpu_rows(gpu)]
        for finding in node.findings:
            out.append(f"  {finding.span}: {finding.severity}[{finding.code}]: {finding.message}")
            out.append(f"    hint: {finding.hint}")
        out.append("")
    return "\n".join(out)


def render_node_markdown(result: NodeIngest) -> str:
    """A summary table of nodes, then a table of findings."""
    out = [
        "| node | verdict | driver | CUDA | GPUs | findings |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for node in result.nodes:
        codes = ", ".join(sorted({f.code for f in node.findings})) or "none"
        out.append(
            f"| {_md(node.node)} | {node.verdict} | {_md(_value(node.driver))} | "
            f"{_md(_value(node.cuda))} | {len(node.gpus)} | {codes} |"
        )
    findings = [f for node in result.nodes for f in node.findings]
    if findings:
        out += [
            "",
            "| node | GPU | code | severity | finding | hint |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for f in findings:
            gpu = "" if f.gpu is None else str(f.gpu)
            out.append(
                f"| {_md(f.node)} | {gpu} | {f.code} | {f.severity} | {_md(f.message)} | "
                f"{_md(f.hint)} |"
            )
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
