"""`nvcregen ingest node`: the real H200 capture, one fault per copy, Xid events, drift."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.kinds.node.files import MAX_BYTES, ingest_nodes, read_node_file
from nvcregen.kinds.node.health import Expectations
from nvcregen.kinds.node.smitext import parse_node_csv, parse_node_text
from nvcregen.kinds.node.smixml import parse_node_xml
from nvcregen.kinds.node.xid import XIDS, parse_xids

ROOT = Path(__file__).resolve().parents[4]
NODE = ROOT / "tests" / "fixtures" / "node"
REAL = NODE / "h200-vm"
EIGHT = NODE / "h200-8gpu"
SITE = NODE / "node-site.yaml"
FAULTS = NODE / "faults"


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def node_json(result: Result) -> dict[str, object]:
    doc: dict[str, list[dict[str, object]]] = json.loads(result.stdout)
    assert len(doc["nodes"]) == 1
    return doc["nodes"][0]


REAL_GPU = {
    "index": 0,
    "bus_id": "00000000:00:06.0",
    "product": "NVIDIA H200",
    "vbios": "96.00.A5.00.1A",
    "pcie_gen": 5,
    "pcie_gen_max": 5,
    "pcie_width": 16,
    "pcie_width_max": 16,
    "ecc_current": True,
    "ecc_pending": True,
    "dram_unc_volatile": 0,
    "sram_unc_volatile": 0,
    "dram_unc_aggregate": 0,
    "sram_unc_aggregate": 0,
    "sram_threshold_exceeded": False,
    "remapped_correctable": 0,
    "remapped_uncorrectable": 0,
    "remap_pending": False,
    "remap_failure": False,
    "histogram": [["max", 3072], ["high", 0], ["partial", 0], ["low", 0], ["none", 0]],
    "hw_slowdown": False,
    "hw_thermal_slowdown": False,
    "hw_power_brake": False,
    "sw_thermal_slowdown": False,
    "mig_current": False,
    "mig_pending": False,
    "temperature": 37,
    "slowdown_headroom": 52,  # NVML: slowdown 89 C, GPU 37 C
    "memory_temperature": 39,
}


def test_real_capture_is_healthy_with_every_fact() -> None:
    result = run(
        "ingest", "node", REAL / "nvidia-smi-q.xml", REAL / "dmesg-nvrm.txt", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    node = node_json(result)
    assert node["verdict"] == "healthy"
    assert node["findings"] == []
    assert (node["driver"], node["cuda"], node["gpuCount"], node["attachedGpus"]) == (
        "580.159.04",
        "13.0",
        1,
        1,
    )
    assert node["gpus"] == [REAL_GPU]
    assert node["xids"] == []  # its NVRM lines hold no Xid


def test_text_form_reads_the_same_facts_as_the_xml() -> None:
    xml = parse_node_xml((REAL / "nvidia-smi-q.xml").read_text(), "x")
    text = parse_node_text((REAL / "nvidia-smi-q.txt").read_text(), "t")
    assert (text.driver, text.cuda, text.attached_gpus) == (xml.driver, xml.cuda, xml.attached_gpus)
    assert text.gpus[0].to_json() == xml.gpus[0].to_json() == REAL_GPU


def test_csv_form_reads_its_subset_and_agrees_with_nvml() -> None:
    csv = parse_node_csv((REAL / "query-gpu.csv").read_text(), "c").gpus[0].to_json()
    nvml = json.loads((REAL / "nvml.json").read_text())["gpus"][0]
    assert csv["pcie_width"] == nvml["pcieWidthCurrent"] == 16
    assert csv["pcie_gen"] == nvml["pcieGenCurrent"] == 5
    assert csv["temperature"] == nvml["temperatureGpu"] == 37
    assert csv["unc_volatile_total"] == nvml["eccUncorrectedVolatile"] == 0
    assert csv["vbios"] == nvml["vbios"]
    assert {k: v for k, v in csv.items() if k in REAL_GPU} == {
        k: REAL_GPU[k] for k in csv if k in REAL_GPU
    }


def test_forms_of_one_folder_are_one_node_and_the_text_fills_nothing_the_xml_has() -> None:
    result = ingest_nodes(
        [REAL / "query-gpu.csv", REAL / "nvidia-smi-q.txt", REAL / "nvidia-smi-q.xml"]
    )
    assert [n.node for n in result.nodes] == ["h200-vm"]
    assert result.nodes[0].files[0].endswith("nvidia-smi-q.xml")
    assert result.nodes[0].gpus[0].unc_volatile_total == 0  # from the CSV, which alone has totals
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("fault", "code", "words"),
    [
        ("pcie-x8", "NVC801", "PCIe link at x8 of x16"),
        ("row-remap-failure", "NVC808", "a row remapping failed"),
        ("ecc-uncorrectable", "NVC804", "uncorrectable ECC errors since the last reset (DRAM 2)"),
        ("hw-slowdown", "NVC811", "hardware slowdown active"),
    ],
)
def test_each_fault_copy_exits_1_and_names_its_fault(fault: str, code: str, words: str) -> None:
    result = run("ingest", "node", FAULTS / fault / "nvidia-smi-q.xml", "--format", "json")
    assert result.exit_code == 1
    node = node_json(result)
    assert node["verdict"] == "failed"
    findings = node["findings"]
    assert isinstance(findings, list)
    assert [(f["code"], f["severity"]) for f in findings] == [(code, "error")]
    assert words in findings[0]["message"]
    assert findings[0]["hint"]


def test_fault_points_at_the_line_that_shows_it() -> None:
    result = run("ingest", "node", FAULTS / "pcie-x8" / "nvidia-smi-q.xml")
    assert result.exit_code == 1
    lines = (FAULTS / "pcie-x8" / "nvidia-smi-q.xml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "<current_link_width>8x" in text)
    assert f"nvidia-smi-q.xml:{line}:" in result.stdout
    assert "error[NVC801]" in result.stdout


def test_driver_other_than_the_pool_expects_is_drift() -> None:
    fault = FAULTS / "driver-other" / "nvidia-smi-q.xml"
    alone = run("ingest", "node", fault)
    assert alone.exit_code == 0  # nothing wrong without a statement of what to run
    judged = run("ingest", "node", fault, "--site", SITE, "--pool", "h200", "--format", "json")
    assert judged.exit_code == 1
    findings = node_json(judged)["findings"]
    assert isinstance(findings, list)
    assert [f["code"] for f in findings] == ["NVC817"]
    assert "driver 570.195.03, the pool expects 580.159.04" in findings[0]["message"]
    real = run("ingest", "node", REAL / "nvidia-smi-q.xml", "--site", SITE, "--pool", "h200")
    assert real.exit_code == 0, real.output


def test_unknown_pool_is_a_usage_error() -> None:
    result = run("ingest", "node", REAL / "nvidia-smi-q.xml", "--site", SITE, "--pool", "nope")
    assert result.exit_code == 2
    assert "no pool 'nope'" in result.output


@pytest.mark.parametrize(
    "text",
    [
        "bash: nvidia-smi: command not found\n",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        "<?xml version='1.0'?><other/>",
        "<?xml version='1.0'?><nvidia_smi_log><driver_version>1</driver_version></nvidia_smi_log>",
        "<?xml version='1.0'?><nvidia_smi_log><gpu id='0'>",
        "==============NVSMI LOG==============\n\nDriver Version : 580\n",
        "index, name\n",
    ],
)
def test_text_that_is_not_nvidia_smi_output_exits_2_at_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "node" / "out.txt"
    path.parent.mkdir()
    path.write_text(text)
    result = run("ingest", "node", path)
    assert result.exit_code == 2
    assert f"{path}:1:1: error[NVC800]" in result.stderr
    assert "read 0 of 1 files" in result.stderr


def test_the_fixture_that_is_not_nvidia_smi_exits_2() -> None:
    result = run("ingest", "node", FAULTS / "not-nvidia-smi" / "nvidia-smi.txt")
    assert result.exit_code == 2
    assert "NVC800" in result.stderr


def test_entity_expansion_is_refused(tmp_path: Path) -> None:
    bomb = (
        '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<nvidia_smi_log><driver_version>&b;'
        "</driver_version><gpu id='x'/></nvidia_smi_log>\n"
    )
    path = tmp_path / "bomb.xml"
    path.write_text(bomb)
    result = run("ingest", "node", path)
    assert result.exit_code == 2
    assert "refused XML: EntitiesForbidden" in result.stderr


def test_size_limit_at_the_limit_and_one_over(tmp_path: Path) -> None:
    real = (REAL / "nvidia-smi-q.xml").read_bytes()
    at = tmp_path / "at" / "q.xml"
    over = tmp_path / "over" / "q.xml"
    at.parent.mkdir()
    over.parent.mkdir()
    at.write_bytes(real + b" " * (MAX_BYTES - len(real)))
    over.write_bytes(real + b" " * (MAX_BYTES - len(real) + 1))
    assert ingest_nodes([at]).exit_code == 0
    refused = ingest_nodes([over])
    assert refused.exit_code == 2
    assert "larger than 16 MiB" in refused.diagnostics[0].message


def test_eight_gpu_node_with_xid_events_fails_on_xid_79_only() -> None:
    result = run(
        "ingest", "node", EIGHT / "nvidia-smi-q.xml", EIGHT / "kernel-xid.txt", "--format", "json"
    )
    assert result.exit_code == 1
    node = node_json(result)
    assert node["gpuCount"] == 8
    findings = node["findings"]
    assert isinstance(findings, list)
    codes = [(f["code"], f["severity"], f["message"].split(" (")[0]) for f in findings]
    assert codes == [
        ("NVC816", "warning", "Xid 13"),
        ("NVC816", "warning", "Xid 45"),
        ("NVC816", "warning", "Xid 63"),
        ("NVC816", "warning", "Xid 94"),
        ("NVC815", "error", "Xid 79"),
        ("NVC815", "error", "Xid 154"),
    ]
    assert findings[4]["at"].endswith("kernel-xid.txt:7:16")


def test_catalogue_covers_the_codes_the_issue_names() -> None:
    named = {13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 74, 79, 92, 94, 95, 119, 120}
    assert named <= set(XIDS)
    assert {code for code in named if XIDS[code].fails} == {48, 61, 62, 64, 74, 79, 95, 119, 120}


def test_xid_lines_in_both_driver_formats_and_with_prefixes() -> None:
    text = (
        "2026-12-03T10:00:00.000000000Z [  1.0] NVRM: Xid (PCI:0000:18:00): 48, pid=1, DBE\n"
        "Dec 03 10:00:01 node kernel: NVRM: Xid (0000:2A:00): 95, pid=2, Uncontained\n"
        "NVRM: GPU at PCI:0000:18:00: GPU-x\n"
    )
    events = parse_xids(text, "k")
    assert [(e.code, e.bus_id, e.span.line) for e in events] == [
        (48, "0000:18:00", 1),
        (95, "0000:2a:00", 2),
    ]
    unknown = ingest_nodes([])  # no files: no nodes, exit 0
    assert unknown.exit_code == 0


def test_a_node_differing_from_its_pools_majority_is_reported(tmp_path: Path) -> None:
    real = (REAL / "nvidia-smi-q.xml").read_text()
    paths = []
    for name, driver in (("a", "580.159.04"), ("b", "580.159.04"), ("c", "570.195.03")):
        path = tmp_path / name / "q.xml"
        path.parent.mkdir()
        path.write_text(real.replace("580.159.04</driver_version>", f"{driver}</driver_version>"))
        paths.append(path)
    result = ingest_nodes(paths)
    found = {n.node: [(f.code, f.severity.value) for f in n.findings] for n in result.nodes}
    assert found == {"a": [], "b": [], "c": [("NVC818", "warning")]}
    assert "2 of 3 nodes of the pool run 580.159.04" in result.nodes[2].findings[0].message
    stated = ingest_nodes(paths, Expectations(driver="580.159.04"))
    assert [f.code for f in stated.nodes[2].findings] == ["NVC817"]  # stated: drift, not majority
    two = ingest_nodes(paths[1:])  # no strict majority of two
    assert all(not n.findings for n in two.nodes)


def test_pcie_generation_below_max_is_a_warning_and_width_is_exact(tmp_path: Path) -> None:
    real = (REAL / "nvidia-smi-q.xml").read_text()
    gen = real.replace(
        "<current_link_gen>5</current_link_gen>", "<current_link_gen>4</current_link_gen>"
    )
    facts = read_node_file(gen, "g")[0][1]
    assert (facts.gpus[0].pcie_gen, facts.gpus[0].pcie_gen_max) == (4, 5)
    path = tmp_path / "n" / "q.xml"
    path.parent.mkdir()
    path.write_text(gen)
    result = ingest_nodes([path])
    assert [(f.code, f.severity.value) for f in result.nodes[0].findings] == [("NVC802", "warning")]
    assert result.exit_code == 1


@pytest.mark.parametrize(
    ("headroom", "severity"), [(6, None), (5, "warning"), (1, "warning"), (0, "error")]
)
def test_thermal_headroom_boundaries(tmp_path: Path, headroom: int, severity: str | None) -> None:
    real = (REAL / "nvidia-smi-q.xml").read_text()
    text = real.replace(
        "<gpu_temp_tlimit>50 C</gpu_temp_tlimit>",
        f"<gpu_temp_tlimit>{headroom - 2} C</gpu_temp_tlimit>",
    )
    path = tmp_path / "n" / "q.xml"
    path.parent.mkdir()
    path.write_text(text)
    findings = ingest_nodes([path]).nodes[0].findings
    assert [f.severity.value for f in findings if f.code == "NVC814"] == (
        [] if severity is None else [severity]
    )


def test_markdown_and_text_forms() -> None:
    md = run("ingest", "node", FAULTS / "pcie-x8" / "nvidia-smi-q.xml", "--format", "markdown")
    assert "| pcie-x8 | failed | 580.159.04 | 13.0 | 1 | NVC801 |" in md.stdout
    text = run("ingest", "node", REAL / "nvidia-smi-q.xml")
    assert text.stdout.startswith(
        "h200-vm: healthy (driver 580.159.04, CUDA 13.0, 1 GPUs, 0 Xid events)"
    )
    assert "PCIe           gen 5/5 x16/x16" in text.stdout
    bad = run("ingest", "nccl", REAL / "nvidia-smi-q.xml", "--format", "markdown")
    assert bad.exit_code == 2


def _marked_log(xml: str, kernel: str, *, end: bool = True) -> str:
    lines = [
        "@@nvcregen-node-health begin node=gpu-node-07",
        "@@nvcregen-node-health section=xml",
        xml.rstrip("\n"),
        "@@nvcregen-node-health section=kernel",
        kernel.rstrip("\n"),
    ]
    if end:
        lines.append("@@nvcregen-node-health end")
    return "\n".join(lines) + "\n"


def test_a_node_health_log_names_its_node_and_points_at_its_own_lines(tmp_path: Path) -> None:
    xml = (FAULTS / "pcie-x8" / "nvidia-smi-q.xml").read_text()
    kernel = "[ 5.0] NVRM: Xid (PCI:0000:00:06): 79, pid=0, GPU has fallen off the bus.\n"
    log = tmp_path / "pod.log"
    log.write_text(_marked_log(xml, kernel))
    result = ingest_nodes([log])
    assert [n.node for n in result.nodes] == ["gpu-node-07"]
    findings = result.nodes[0].findings
    assert [f.code for f in findings] == ["NVC801", "NVC815"]
    lines = log.read_text().splitlines()
    width = next(i for i, t in enumerate(lines, 1) if "<current_link_width>8x" in t)
    xid = next(i for i, t in enumerate(lines, 1) if "Xid" in t)
    assert (findings[0].span.line, findings[1].span.line) == (width, xid)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda t: t.replace("@@nvcregen-node-health end\n", ""), "no end marker"),
        (lambda t: t.replace("node=gpu-node-07", "node=Bad_Name"), "without a valid node name"),
        (lambda t: t.replace("section=kernel", "section=shell"), "outside a node or unknown"),
    ],
)
def test_a_cut_or_forged_node_health_log_is_unreadable(
    tmp_path: Path, change: Callable[[str], str], words: str
) -> None:
    text = _marked_log((REAL / "nvidia-smi-q.xml").read_text(), "")
    log = tmp_path / "pod.log"
    log.write_text(change(text))
    result = ingest_nodes([log])
    assert result.exit_code == 2
    assert words in result.diagnostics[0].message


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("driver: 580.159.04", "driver: latest"),
        ("pcieWidth: 16", "pcieWidth: 12"),
        ("mig: false", "mig: true"),
    ],
)
def test_a_bad_expectation_is_an_error_at_its_line(tmp_path: Path, line: str, value: str) -> None:
    text = SITE.read_text()
    assert line in text
    site = tmp_path / "site.yaml"
    site.write_text(text.replace(line, value))
    number = next(i for i, t in enumerate(site.read_text().splitlines(), 1) if value in t)
    result = run("ingest", "node", REAL / "nvidia-smi-q.xml", "--site", site, "--pool", "h200")
    assert result.exit_code == 2
    assert f"site.yaml:{number}:" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_node_health_log_saved_with_kubectl_timestamps_reads_the_same(tmp_path: Path) -> None:
    xml = (REAL / "nvidia-smi-q.xml").read_text()
    kernel = "[ 5.0] NVRM: Xid (PCI:0000:00:06): 48, pid=7, DBE\n"
    plain = _marked_log(xml, kernel)
    stamped = "".join(
        f"2026-12-03T10:00:00.{i:09d}Z {line}\n" for i, line in enumerate(plain.splitlines())
    )
    (tmp_path / "a.log").write_text(plain)
    (tmp_path / "b.log").write_text(stamped)
    a, b = (ingest_nodes([tmp_path / name]).nodes[0] for name in ("a.log", "b.log"))
    assert a.gpus == b.gpus
    assert a.gpus[0].to_json() == REAL_GPU
    assert [f.code for f in a.findings] == [f.code for f in b.findings] == ["NVC815"]


def _edited(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """The real capture with each `(old, new)` replaced once, as a one-node folder."""
    text = (REAL / "nvidia-smi-q.xml").read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "n" / "q.xml"
    path.parent.mkdir()
    path.write_text(text)
    return path


def test_a_pending_ecc_mode_change_fails_the_node(tmp_path: Path) -> None:
    path = _edited(
        tmp_path, ("<pending_ecc>Enabled</pending_ecc>", "<pending_ecc>Disabled</pending_ecc>")
    )
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "<pending_ecc>" in text)
    result = ingest_nodes([path])
    gpu = result.nodes[0].gpus[0]
    assert (gpu.ecc_current, gpu.ecc_pending) == (True, False)
    findings = result.nodes[0].findings
    assert [(f.code, f.severity.value) for f in findings] == [("NVC803", "error")]
    assert "ECC pending a change at the next reset" in findings[0].message
    assert findings[0].span.line in (line - 1, line)  # the ECC mode, as the XML prints it
    assert result.nodes[0].verdict == "failed"
    assert result.exit_code == 1


@pytest.mark.parametrize("bucket", ["low", "none"])
def test_one_dram_bank_low_on_spare_rows_is_a_warning(tmp_path: Path, bucket: str) -> None:
    old = f"<row_remapper_histogram_{bucket}>0 bank(s)</row_remapper_histogram_{bucket}>"
    path = _edited(
        tmp_path,
        (old, old.replace("0 bank(s)", "1 bank(s)")),
        ("<row_remapper_histogram_max>3072 bank(s)", "<row_remapper_histogram_max>3071 bank(s)"),
    )
    result = ingest_nodes([path])
    findings = result.nodes[0].findings
    assert [(f.code, f.severity.value) for f in findings] == [("NVC810", "warning")]
    assert f"1 memory bank(s) with {bucket} spare rows left" in findings[0].message
    lines = path.read_text().splitlines()
    assert f"row_remapper_histogram_{bucket}>1" in lines[findings[0].span.line - 1]
    assert (result.nodes[0].verdict, result.exit_code) == ("warning", 1)


def test_a_partial_bank_is_no_finding(tmp_path: Path) -> None:
    old = "<row_remapper_histogram_partial>0 bank(s)</row_remapper_histogram_partial>"
    path = _edited(tmp_path, (old, old.replace("0 bank(s)", "1 bank(s)")))
    assert ingest_nodes([path]).nodes[0].findings == ()


def test_x8_against_an_expected_x16_with_the_maximum_unknown_is_drift(tmp_path: Path) -> None:
    path = _edited(
        tmp_path,
        ("<max_link_width>16x</max_link_width>", "<max_link_width>N/A</max_link_width>"),
        (
            "<current_link_width>16x</current_link_width>",
            "<current_link_width>8x</current_link_width>",
        ),
    )
    alone = ingest_nodes([path])
    gpu = alone.nodes[0].gpus[0]
    assert (gpu.pcie_width, gpu.pcie_width_max) == (8, None)
    assert alone.nodes[0].findings == ()  # no maximum to hold it against: NVC801 cannot judge
    judged = ingest_nodes([path], Expectations(pcie_width=16))
    findings = judged.nodes[0].findings
    assert [(f.code, f.severity.value) for f in findings] == [("NVC817", "error")]
    assert "drift: PCIe width 8, the pool expects 16" in findings[0].message
    assert judged.exit_code == 1
    assert ingest_nodes([path], Expectations(pcie_width=8)).nodes[0].findings == ()


def _retired(tmp_path: Path, sbe: int | str, dbe: int | str) -> Path:
    """The real capture with these retired page counts and no page pending retirement."""
    single = "<multiple_single_bit_retirement>\n\t\t\t\t<retired_count>"
    double = "<double_bit_retirement>\n\t\t\t\t<retired_count>"
    return _edited(
        tmp_path,
        (f"{single}N/A", f"{single}{sbe}"),
        (f"{double}N/A", f"{double}{dbe}"),
        ("<pending_blacklist>N/A", "<pending_blacklist>No"),
        ("<pending_retirement>N/A", "<pending_retirement>No"),
    )


@pytest.mark.parametrize(
    ("sbe", "dbe", "message"),
    [
        (0, 15, None),  # at the DBE limit
        (0, 16, "16 pages retired for double-bit ECC errors: past NVIDIA's limit of 15"),
        (0, 35, "35 pages retired for double-bit ECC errors: past NVIDIA's limit of 15"),
        (44, 15, None),  # 59: one under the total limit, DBE at its own
        (45, 15, "60 retired pages (SBE 45, DBE 15): at or past NVIDIA's limit of 60 per GPU"),
        (46, 15, "61 retired pages (SBE 46, DBE 15): at or past NVIDIA's limit of 60 per GPU"),
        (60, "N/A", "60 retired pages (SBE 60, DBE 0): at or past NVIDIA's limit of 60 per GPU"),
        (59, "N/A", None),
    ],
)
def test_retired_pages_past_nvidias_limits_fail_without_a_pending_flag(
    tmp_path: Path, sbe: int, dbe: int | str, message: str | None
) -> None:
    path = _retired(tmp_path, sbe, dbe)
    result = ingest_nodes([path])
    gpu = result.nodes[0].gpus[0]
    assert (gpu.retired_sbe, gpu.retired_pending) == (sbe, False)
    findings = result.nodes[0].findings
    if message is None:
        assert findings == ()
        assert result.exit_code == 0
        return
    assert [(f.code, f.severity.value) for f in findings] == [("NVC823", "error")]
    assert findings[0].message == f"GPU 0 ({gpu.bus_id}): {message}"
    assert "RMA" in findings[0].hint
    assert (result.nodes[0].verdict, result.exit_code) == ("failed", 1)
    count = "<retired_count>" + str(dbe if "double" in message else sbe)
    assert count in path.read_text().splitlines()[findings[0].span.line - 1]


def test_retired_pages_read_from_the_text_form_fail_too(tmp_path: Path) -> None:
    text = (REAL / "nvidia-smi-q.txt").read_text()
    old = "        Double Bit ECC                                 : N/A"
    assert text.count(old) == 1
    path = tmp_path / "n" / "q.txt"
    path.parent.mkdir()
    path.write_text(text.replace(old, old.replace("N/A", "35")))
    findings = ingest_nodes([path]).nodes[0].findings
    assert [f.code for f in findings] == ["NVC823"]
    assert findings[0].span.line == 171


def test_the_kinds_ingest_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    """`ingest node` through the kind's KindIngest: each refusal exits 2 and says why."""
    alone = run("ingest", "node", REAL / "nvidia-smi-q.xml", "--site", SITE)
    assert alone.exit_code == 2 and "give --site and --pool together" in alone.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: nvcregen.io/v1alpha1\nkind: Site\nspec: [\n")
    unread = run("ingest", "node", REAL / "nvidia-smi-q.xml", "--site", broken, "--pool", "p")
    assert unread.exit_code == 2 and "nothing read" in unread.output, unread.output
    sized = run("ingest", "node", REAL / "nvidia-smi-q.xml", "--at", "1GiB")
    assert sized.exit_code == 2 and "--order and --at are not for it" in sized.output
    nccl = run("ingest", "nccl", REAL / "nvidia-smi-q.xml", "--site", SITE, "--pool", "h200")
    assert nccl.exit_code == 2 and "are for `ingest node`" in nccl.output
