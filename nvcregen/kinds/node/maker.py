"""The node kind's log: `nvidia-smi -q -x` and the kernel's NVRM lines between markers (pure).

What `templates/node-health.sh.j2` prints on a node, read back by `collect` with
`logs.py` (`reader.py`): the node's GPUs as the driver would show
them to nvidia-smi, in the layout of the real capture (tests/fixtures/node/h200-vm/, its
elements that node-health reads), every fact what the node's pool (and its inventory
entry) says it must run: driver, CUDA, VBIOS, GPU count, product, PCIe generation and
width, MIG off. A healthy GPU has ECC on and no error, no row remapped, no page
retired, no clock held down and 49-52 C below its slowdown limit; the kernel section
holds the driver's load line and no Xid. A failing node's GPU 0 shows uncorrectable ECC
errors since its last reset (NVC804), a check that fails the node. nvidia-smi's
timestamp is the section's start and each GPU's temperature 0-3 C over its rest by a
hash of the pod and round, so no two rounds of a node print the same bytes (NVC741).
"""

from __future__ import annotations

import zlib

from nvcregen.kinds.node.logs import node_expectations
from nvcregen.kinds.node.reader import MARK
from nvcregen.plan.model import TestUnit
from nvcregen.rehearse.printer import Maker, Output, Printer, Section, bus_ids, gpu_name

DRIVER = "580.159.04"  # the capture's, where neither the pool nor the inventory names one
CUDA = "13.0"
VBIOS = "96.00.A5.00.1A"
PCIE_GEN = 5  # where neither the pool nor the catalog states the model's generation
PCIE_WIDTH = 16
FAILING_ERRORS = 2  # GPU 0's uncorrectable DRAM errors on a failing node
TLIMIT_C = 50  # degrees below T.Limit at rest; the slowdown limit is 2 C past it: 52 C headroom

XML_HEAD = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">
<nvidia_smi_log>
\t<timestamp>{timestamp}</timestamp>
\t<driver_version>{driver}</driver_version>
\t<cuda_version>{cuda}</cuda_version>
\t<attached_gpus>{gpus}</attached_gpus>
"""
XML_GPU = """\t<gpu id="{bus}.0">
\t\t<product_name>{product}</product_name>
\t\t<product_brand>NVIDIA</product_brand>
\t\t<persistence_mode>Enabled</persistence_mode>
\t\t<mig_mode>
\t\t\t<current_mig>Disabled</current_mig>
\t\t\t<pending_mig>Disabled</pending_mig>
\t\t</mig_mode>
\t\t<minor_number>{index}</minor_number>
\t\t<vbios_version>{vbios}</vbios_version>
\t\t<module_id>{module}</module_id>
\t\t<gpu_recovery_action>None</gpu_recovery_action>
\t\t<pci>
\t\t\t<pci_bus_id>{bus}.0</pci_bus_id>
\t\t\t<pci_gpu_link_info>
\t\t\t\t<pcie_gen>
\t\t\t\t\t<max_link_gen>{gen}</max_link_gen>
\t\t\t\t\t<current_link_gen>{gen}</current_link_gen>
\t\t\t\t</pcie_gen>
\t\t\t\t<link_widths>
\t\t\t\t\t<max_link_width>{width}x</max_link_width>
\t\t\t\t\t<current_link_width>{width}x</current_link_width>
\t\t\t\t</link_widths>
\t\t\t</pci_gpu_link_info>
\t\t\t<replay_counter>0</replay_counter>
\t\t</pci>
\t\t<performance_state>P0</performance_state>
\t\t<clocks_event_reasons>
{clocks}\t\t</clocks_event_reasons>
\t\t<ecc_mode>
\t\t\t<current_ecc>Enabled</current_ecc>
\t\t\t<pending_ecc>Enabled</pending_ecc>
\t\t</ecc_mode>
\t\t<ecc_errors>
\t\t\t<volatile>
\t\t\t\t<sram_correctable>0</sram_correctable>
\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>
\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>
\t\t\t\t<dram_correctable>0</dram_correctable>
\t\t\t\t<dram_uncorrectable>{dram_unc}</dram_uncorrectable>
\t\t\t</volatile>
\t\t\t<aggregate>
\t\t\t\t<sram_correctable>0</sram_correctable>
\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>
\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>
\t\t\t\t<dram_correctable>0</dram_correctable>
\t\t\t\t<dram_uncorrectable>{dram_unc}</dram_uncorrectable>
\t\t\t\t<sram_threshold_exceeded>No</sram_threshold_exceeded>
\t\t\t</aggregate>
\t\t</ecc_errors>
\t\t<retired_pages>
\t\t\t<multiple_single_bit_retirement>
\t\t\t\t<retired_count>N/A</retired_count>
\t\t\t</multiple_single_bit_retirement>
\t\t\t<double_bit_retirement>
\t\t\t\t<retired_count>N/A</retired_count>
\t\t\t</double_bit_retirement>
\t\t\t<pending_blacklist>N/A</pending_blacklist>
\t\t\t<pending_retirement>N/A</pending_retirement>
\t\t</retired_pages>
\t\t<remapped_rows>
\t\t\t<remapped_row_corr>0</remapped_row_corr>
\t\t\t<remapped_row_unc>0</remapped_row_unc>
\t\t\t<remapped_row_pending>No</remapped_row_pending>
\t\t\t<remapped_row_failure>No</remapped_row_failure>
\t\t\t<row_remapper_histogram>
\t\t\t\t<row_remapper_histogram_max>3072 bank(s)</row_remapper_histogram_max>
\t\t\t\t<row_remapper_histogram_high>0 bank(s)</row_remapper_histogram_high>
\t\t\t\t<row_remapper_histogram_partial>0 bank(s)</row_remapper_histogram_partial>
\t\t\t\t<row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>
\t\t\t\t<row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>
\t\t\t</row_remapper_histogram>
\t\t</remapped_rows>
\t\t<temperature>
\t\t\t<gpu_temp>{temp} C</gpu_temp>
\t\t\t<gpu_temp_tlimit>{tlimit} C</gpu_temp_tlimit>
\t\t\t<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>
\t\t\t<memory_temp>{memory_temp} C</memory_temp>
\t\t</temperature>
\t</gpu>
"""
CLOCK_REASONS = (  # nvidia-smi's clock event reasons: at rest, only the GPU is idle
    ("gpu_idle", "Active"),
    ("sw_power_cap", "Not Active"),
    ("hw_slowdown", "Not Active"),
    ("hw_thermal_slowdown", "Not Active"),
    ("hw_power_brake_slowdown", "Not Active"),
    ("sw_thermal_slowdown", "Not Active"),
)
CLOCKS = "".join(
    f"\t\t\t<clocks_event_reason_{r}>{on}</clocks_event_reason_{r}>\n" for r, on in CLOCK_REASONS
)
KERNEL = (
    "[    0.563890] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {driver}"
    "  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Mon Sep  1 00:00:00 UTC 2025\n"
)


def node_health_output(printer: Printer, unit: TestUnit, at: Section) -> Output:
    """The node-health script on one node: its markers, nvidia-smi's XML, the kernel's lines.

    nvidia-smi exits 0 on a failing node too: the failure is in what it prints.
    """
    node = at.pack.nodes[0]
    expected = node_expectations(unit, node)
    gpus = expected.gpus_per_node or unit.pool.gpus_per_node
    driver = expected.driver or DRIVER
    head = XML_HEAD.format(
        timestamp=at.start.ctime(),
        driver=driver,
        cuda=expected.cuda or CUDA,
        gpus=gpus,
    )
    width = expected.pcie_width or PCIE_WIDTH
    gen = expected.pcie_gen or unit.pool.hardware.pcie_gen or PCIE_GEN
    product = gpu_name(unit)
    crc = zlib.crc32(f"{at.pack.pod}/{at.pack.round}".encode())
    warmer = [(crc >> 2 * (i % 16)) & 3 for i in range(gpus)]  # 0-3 C: each pod its own
    cards = [
        XML_GPU.format(
            bus=bus,
            product=product,
            index=i,
            module=i + 1,
            vbios=expected.vbios or VBIOS,
            clocks=CLOCKS,
            gen=gen,
            width=width,
            dram_unc=FAILING_ERRORS if at.failing and i == 0 else 0,
            temp=31 + warmer[i],
            tlimit=TLIMIT_C - warmer[i],
            memory_temp=33 + warmer[i],
        )
        for i, bus in enumerate(bus_ids(gpus))
    ]
    text = (
        f"{MARK} begin node={node}\n{MARK} section=xml\n{head}{''.join(cards)}</nvidia_smi_log>\n"
        f"{MARK} section=kernel\n{KERNEL.format(driver=driver)}{MARK} end rc=0\n"
    )
    return Output(text, 0, at.seconds, exit_line=False)


MAKER: Maker = node_health_output  # what `rehearse/makers/registry.py` finds by the kind's name
