"""`ingest node`: checks it cannot judge leave the node incomplete, never healthy (#32).

Two ways a node's output held less than it seemed:

- `dmesg` refused in the node-health pod (`kernel.dmesg_restrict=1`): the log said so and
  the node's Xid check passed with no Xid read. Now it is NVC825, naming the node and the
  cause, with a hint, and the node is `incomplete`;
- a number of thousands of digits in `nvidia-smi` XML, text or CSV: Python refused to
  convert it and `ingest node` died with an internal error (exit 70). Now that value is
  refused (NVC800 at its line and column), its fact unknown, the rest read, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from nvcregen.cli import main
from nvcregen.ingest.limits import MAX_DIGITS
from nvcregen.kinds.node.files import ingest_nodes

ROOT = Path(__file__).resolve().parents[4]
REAL = ROOT / "tests" / "fixtures" / "node" / "h200-vm"
XML = (REAL / "nvidia-smi-q.xml").read_text()
TEXT = (REAL / "nvidia-smi-q.txt").read_text()
CSV = (REAL / "query-gpu.csv").read_text()
DENIED = "dmesg: read kernel buffer failed: Operation not permitted"
SCRIPT_LINE = f"[nvcregen] dmesg refused, Xid events not read: {DENIED}"  # the script's
BUSYBOX = "dmesg: klogctl: Operation not permitted"
XID_79 = "[ 9.1] NVRM: Xid (PCI:0000:00:06): 79, pid=1, GPU has fallen off the bus.\n"
LONG = "9" * 5000


def run(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert "Traceback" not in result.output
    assert "internal error" not in result.output
    return result


def node_json(result: Result) -> dict[str, Any]:
    doc: dict[str, list[dict[str, Any]]] = json.loads(result.stdout)
    assert len(doc["nodes"]) == 1
    return doc["nodes"][0]


def health_log(kernel: str | None, xml: str = XML, node: str = "gpu-node-07") -> str:
    """A node-health log; `kernel` None leaves the kernel section out."""
    lines = [f"@@nvcregen-node-health begin node={node}", "@@nvcregen-node-health section=xml"]
    lines.append(xml.rstrip("\n"))
    if kernel is not None:
        lines += ["@@nvcregen-node-health section=kernel", kernel.rstrip("\n")]
    return "\n".join([*lines, "@@nvcregen-node-health end rc=0"]) + "\n"


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# --- dmesg refused: the Xid check is not judged ----------------------------------------


STAMP = "2026-12-03T10:00:00Z "  # kubectl logs --timestamps


@pytest.mark.parametrize(
    ("kernel", "detail", "column"),
    [
        (SCRIPT_LINE, DENIED, 1),
        (DENIED, DENIED, 1),  # dmesg's own error, as another script would leave it
        (STAMP + BUSYBOX, BUSYBOX, len(STAMP) + 1),
    ],
    ids=["script-line", "util-linux", "busybox-timestamped"],
)
def test_a_refused_kernel_log_leaves_the_xid_check_unjudged(
    tmp_path: Path, kernel: str, detail: str, column: int
) -> None:
    log = tmp_path / "pod.log"
    text = health_log(kernel)
    log.write_text(text)
    result = run("ingest", "node", log, "--format", "json")
    assert result.exit_code == 1  # a finding
    node = node_json(result)
    assert node["verdict"] == "incomplete"
    (finding,) = node["findings"]
    assert finding == {
        "code": "NVC825",
        "severity": "warning",
        "node": "gpu-node-07",
        "message": f"node gpu-node-07: Xid events not judged: dmesg was refused ({detail})",
        "hint": finding["hint"],
        "at": f"{log}:{line_of(text, kernel)}:{column}",
        "unjudged": True,
    }
    assert (
        "CAP_SYSLOG or privileged (its namespace then needs the privileged Pod" in (finding["hint"])
    )
    assert "journalctl -k" in finding["hint"]
    assert "kernel.dmesg_restrict=1" in finding["hint"]


def test_the_text_and_markdown_forms_say_the_node_is_incomplete_and_why(tmp_path: Path) -> None:
    log = tmp_path / "pod.log"
    log.write_text(health_log(SCRIPT_LINE))
    text = run("ingest", "node", log).stdout
    assert text.startswith("gpu-node-07: incomplete (")
    assert "warning[NVC825]: node gpu-node-07: Xid events not judged: dmesg was refused" in text
    assert "    hint: the pod may not read the kernel log (kernel.dmesg_restrict=1)" in text
    markdown = run("ingest", "node", log, "--format", "markdown").stdout
    assert "| gpu-node-07 | incomplete |" in markdown
    assert "| gpu-node-07 |  | NVC825 | warning |" in markdown


def test_a_log_without_a_kernel_section_leaves_the_xid_check_unjudged(tmp_path: Path) -> None:
    log = tmp_path / "pod.log"
    log.write_text(health_log(None))
    node = node_json(run("ingest", "node", log, "--format", "json"))
    assert node["verdict"] == "incomplete"
    assert [f["message"] for f in node["findings"]] == [
        "node gpu-node-07: Xid events not judged: the log has no kernel section (the test's"
        " script printed none)"
    ]


def test_a_kernel_section_read_without_any_xid_is_judged(tmp_path: Path) -> None:
    log = tmp_path / "pod.log"
    log.write_text(health_log(""))  # dmesg answered; no NVRM line
    result = run("ingest", "node", log, "--format", "json")
    assert result.exit_code == 0
    assert node_json(result)["verdict"] == "healthy"


def test_the_nodes_own_kernel_log_beside_the_pod_log_judges_its_xid_events(
    tmp_path: Path,
) -> None:
    log = tmp_path / "pod.log"
    log.write_text(health_log(SCRIPT_LINE))
    folder = tmp_path / "gpu-node-07"
    folder.mkdir()
    (folder / "journal.txt").write_text(XID_79)  # `journalctl -k` as root, as the hint says
    result = run("ingest", "node", log, folder / "journal.txt", "--format", "json")
    node = node_json(result)
    assert [f["code"] for f in node["findings"]] == ["NVC815"]
    assert node["verdict"] == "failed"


def test_a_failing_finding_still_fails_a_node_whose_xid_check_is_unjudged(tmp_path: Path) -> None:
    log = tmp_path / "pod.log"
    narrow = XML.replace("<current_link_width>16x", "<current_link_width>8x", 1)
    log.write_text(health_log(SCRIPT_LINE, narrow))
    node = node_json(run("ingest", "node", log, "--format", "json"))
    assert node["verdict"] == "failed"
    assert sorted(f["code"] for f in node["findings"]) == ["NVC801", "NVC825"]


def test_the_refusal_text_is_printed_escaped(tmp_path: Path) -> None:
    log = tmp_path / "pod.log"
    log.write_text(health_log("[nvcregen] dmesg refused, Xid events not read: \x1b]0;x\x07 no"))
    text = run("ingest", "node", log).stdout
    assert "\x1b" not in text
    assert "dmesg was refused (\\x1b]0;x\\x07 no)" in text


# --- numbers too long: the value refused, the rest read ----------------------------------


def edited(tmp_path: Path, text: str, old: str, new: str, name: str) -> Path:
    assert old in text
    path = tmp_path / "node-a" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_5000_digit_count_in_the_xml_is_refused_at_its_line_and_the_rest_read(
    tmp_path: Path,
) -> None:
    path = edited(tmp_path, XML, "<dram_uncorrectable>0<", f"<dram_uncorrectable>{LONG}<", "q.xml")
    result = run("ingest", "node", path, "--format", "json")
    assert result.exit_code == 2
    node = node_json(result)
    assert node["verdict"] == "incomplete"
    (finding,) = node["findings"]
    line = line_of(path.read_text(), LONG)
    assert finding["code"] == "NVC800"
    assert finding["at"] == f"{path}:{line}:5"  # the element's column, after its tabs
    assert finding["gpu"] == 0
    assert finding["message"] == (
        "node node-a: GPU 0 dram_unc_volatile not judged: the number has 5000 digits, more"
        f" than {MAX_DIGITS}"
    )
    assert "no nvidia-smi output prints a number this long" in finding["hint"]
    gpu = node["gpus"][0]
    assert "dram_unc_volatile" not in gpu  # unknown, not zero
    assert gpu["dram_unc_aggregate"] == 0 and gpu["pcie_width"] == 16  # read on


def test_a_number_of_max_digits_is_read_and_one_more_is_refused(tmp_path: Path) -> None:
    at = edited(tmp_path, XML, "<gpu_temp>37 C<", f"<gpu_temp>{'1' * MAX_DIGITS} C<", "a.xml")
    result = ingest_nodes([at])
    assert result.nodes[0].gpus[0].temperature == int("1" * MAX_DIGITS)
    assert not [f for f in result.nodes[0].findings if f.code == "NVC800"]
    over = "1" * (MAX_DIGITS + 1)
    path = edited(tmp_path, XML, "<gpu_temp>37 C<", f"<gpu_temp>{over} C<", "b.xml")
    refused = ingest_nodes([path])
    assert refused.nodes[-1].gpus[0].temperature is None
    assert [f.code for f in refused.nodes[-1].findings] == ["NVC800"]
    assert refused.exit_code == 2


def test_a_hexadecimal_number_too_long_is_refused_too(tmp_path: Path) -> None:
    path = edited(tmp_path, XML, "<gpu_temp>37 C<", f"<gpu_temp>0x{'f' * 5000}<", "q.xml")
    result = run("ingest", "node", path, "--format", "json")  # json.dumps of it would fail
    assert result.exit_code == 2
    (finding,) = node_json(result)["findings"]
    assert finding["message"].endswith("the hexadecimal number has 5000 digits, more than 30")


def test_a_5000_digit_attached_gpu_count_is_refused_node_wide(tmp_path: Path) -> None:
    path = edited(tmp_path, XML, "<attached_gpus>1<", f"<attached_gpus>{LONG}<", "q.xml")
    result = run("ingest", "node", path, "--format", "json")
    assert result.exit_code == 2
    node = node_json(result)
    assert node["attachedGpus"] is None and node["gpuCount"] == 1
    (finding,) = node["findings"]
    assert finding["message"].startswith("node node-a: attached_gpus not judged:")
    assert finding["at"] == f"{path}:{line_of(path.read_text(), LONG)}:2"
    assert "gpu" not in finding


def test_a_5000_digit_count_in_the_text_form_is_refused(tmp_path: Path) -> None:
    old = "DRAM Uncorrectable                         : 0"
    path = edited(tmp_path, TEXT, old, old[:-1] + LONG, "q.txt")
    result = run("ingest", "node", path, "--format", "json")
    assert result.exit_code == 2
    (finding,) = node_json(result)["findings"]
    assert finding["message"].startswith("node node-a: GPU 0 dram_unc_volatile not judged:")
    assert finding["at"] == f"{path}:{line_of(path.read_text(), LONG)}:13"


def test_a_5000_digit_cell_in_the_csv_is_refused_at_its_column(tmp_path: Path) -> None:
    row = CSV.splitlines()[1]
    cells = row.split(", ")
    cells[8] = LONG  # pcie.link.width.current
    path = edited(tmp_path, CSV, row, ", ".join(cells), "q.csv")
    result = run("ingest", "node", path, "--format", "json")
    assert result.exit_code == 2
    node = node_json(result)
    (finding,) = node["findings"]
    assert finding["message"].startswith(
        "node node-a: GPU 0 pcie.link.width.current not judged: the number has 5000 digits"
    )
    assert finding["at"] == f"{path}:2:{row.index(', 16, 16,') + 3}"
    assert node["gpus"][0]["pcie_width_max"] == 16


def test_a_5000_digit_csv_index_falls_back_to_the_rows_place(tmp_path: Path) -> None:
    _, row, *_ = CSV.splitlines()
    path = edited(tmp_path, CSV, row, LONG + row[1:], "q.csv")
    node = node_json(run("ingest", "node", path, "--format", "json"))
    assert node["gpus"][0]["index"] == 0
    assert [f["message"][:40] for f in node["findings"]] == [
        "node node-a: index not judged: the numbe"
    ]


def test_a_refused_value_in_one_file_leaves_the_other_files_read(tmp_path: Path) -> None:
    bad = edited(tmp_path, XML, "<dram_uncorrectable>0<", f"<dram_uncorrectable>{LONG}<", "q.xml")
    good = tmp_path / "node-b" / "q.xml"
    good.parent.mkdir()
    good.write_text(XML)
    result = run("ingest", "node", bad, good, "--format", "json")
    assert result.exit_code == 2
    verdicts = {n["node"]: n["verdict"] for n in json.loads(result.stdout)["nodes"]}
    assert verdicts == {"node-a": "incomplete", "node-b": "healthy"}


def test_a_5000_digit_value_in_a_node_health_log_is_refused_at_the_logs_line(
    tmp_path: Path,
) -> None:
    log = tmp_path / "pod.log"
    text = health_log("", XML.replace("<dram_uncorrectable>0<", f"<dram_uncorrectable>{LONG}<", 1))
    log.write_text(text)
    result = run("ingest", "node", log, "--format", "json")
    assert result.exit_code == 2
    (finding,) = node_json(result)["findings"]
    assert finding["at"] == f"{log}:{line_of(text, LONG)}:5"


def test_a_value_two_facts_read_is_refused_once(tmp_path: Path) -> None:
    """An older driver's absolute limits: the GPU temperature feeds the headroom too."""
    old = "<gpu_temp_tlimit>50 C</gpu_temp_tlimit>"
    absolute = "<gpu_temp_slow_threshold>87 C</gpu_temp_slow_threshold>"
    older = XML.replace(old, absolute, 1).replace("<gpu_temp>37 C<", f"<gpu_temp>{LONG} C<", 1)
    path = edited(tmp_path, older, "<gpu_temp>", "<gpu_temp>", "q.xml")
    (node,) = ingest_nodes([path]).nodes
    assert (node.gpus[0].temperature, node.gpus[0].slowdown_headroom) == (None, None)
    assert [f.message[:47] for f in node.findings] == [
        "node node-a: GPU 0 temperature not judged: the "
    ]
    healthy = edited(tmp_path, XML.replace(old, absolute, 1), "<gpu_temp>", "<gpu_temp>", "h.xml")
    assert ingest_nodes([healthy]).nodes[0].gpus[0].slowdown_headroom == 50  # 87 - 37
