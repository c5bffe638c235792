"""Packed copies of the trainer-mode sites and their saved logs, as the packed runs print them.

`packed(text)` sets `readiness.packing: packed` on a trainer-mode site (issue #33; the
shipped sites stay `perRun` until the lead switches them). `write_packed_logs` writes
the logs of every packed run of such a site, with the same outcomes as
`oncallfactory.write_logs` writes for its per-run twin (`busbw(stage, test, nodes)`):

- a node pack's Job: one log per node of its chunk, named after its pod
  (`<job>-<index>-<5 characters>`), each test a section between the pack's begin line
  (test, node, pod, start) and its end line (rc), holding what the test's own run
  prints: the DCGM script's begin line and NVIDIA's captured JSON, or nccl-tests output
  of 8 ranks whose host is the pod (its hostname);
- a group pack's TrainJob: its launcher pod's log, each test's nccl-tests output of the
  group's nodes and the launcher's `nvcregen: <test> exit=... seconds=...` line.

`Edit` changes the sections before they are written (a failed test, a moved section).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from linkctrlogs import passing_body
from oncallfactory import COLLECTIVES, DCGM_JSON, Busbw, healthy, nccl_text
from trainerfactory import compiled

from nvcregen.emit.canonical import dump_yaml

Obj = dict[str, Any]


def packed(text: str) -> str:
    """The trainer-mode site `text` with `readiness.packing: packed` (set, or added)."""
    if re.search(r"(?m)^    packing: \w+", text):
        return re.sub(r"(?m)^    packing: \w+", "    packing: packed", text, count=1)
    found = re.sub(r"(?m)^(    engine: trainer.*)$", r"\1\n    packing: packed", text, count=1)
    assert found != text
    return found


@dataclass(frozen=True)
class Section:
    """One test's section of a packed log, as written.

    `node` and `pod` are "" in a launcher's log; `body` is what the test printed.
    """

    stage: str
    test: str
    round: int
    node: str
    pod: str
    start: str
    body: str
    rc: int = 0

    def text(self) -> str:
        """The section with its begin and end lines."""
        where = f" node={self.node} pod={self.pod}" if self.node else ""
        return (
            f"@@nvcregen-pack begin test={self.test}{where} start={self.start}\n"
            f"{self.body}@@nvcregen-pack end test={self.test} rc={self.rc}\n"
        )


@dataclass
class PackLog:
    """One saved log of a packed run: its file and its sections (edited in place)."""

    path: Path
    run: str
    sections: list[Section]
    node: str = ""  # the node a node pack's pod ran on


Edit = Callable[[list[PackLog]], None]


def pod_name(job: str, index: int) -> str:
    """The pod of an Indexed Job's index, with a suffix fixed by its name."""
    crc = zlib.crc32(f"{job}-{index}".encode())
    return f"{job}-{index}-{crc % 36**5:05x}"[: len(job) + len(str(index)) + 7]


def _start(key: str) -> str:
    crc = zlib.crc32(key.encode())
    return f"2026-12-03T{10 + crc % 12:02d}:{crc // 12 % 60:02d}:{crc // 720 % 60:02d}Z"


def dcgm_body(node: str, pod: str, start: str) -> str:
    """A passing DCGM level's output inside a pack: the script's begin line, the JSON."""
    begin = f"@@nvcregen-dcgm begin node={node} pod={pod} start={start}\n"
    return begin + DCGM_JSON.read_text(encoding="utf-8") + "nvcregen: dcgmi diag exit=0\n"


def _transport(stage: str, test: str) -> str:
    if stage == "single-node":
        return ""
    return "Socket" if test.endswith("-tcp") else "IB"


def _nccl(
    stage: str, test: str, nodes: tuple[str, ...], hosts: tuple[str, ...], busbw: Busbw,
    seen: Counter[object],
) -> str:  # fmt: skip
    obj = {
        "metadata": {
            "labels": {"nvcregen.io/stage": stage, "nvcregen.io/test": test},
            "annotations": {"nvcregen.io/expected-transport": _transport(stage, test)},
        }
    }
    return nccl_text(obj, nodes, busbw, seen, hosts)


def packed_logs(text: str, folder: Path, busbw: Busbw = healthy) -> list[PackLog]:
    """Every saved log of a packed site's runs (not written yet), in the plan's order."""
    objects = [m.obj for m in compiled(text) if m.kind in {"TrainJob", "Job"}]
    seen: Counter[object] = Counter()
    found = []
    for obj in objects:
        meta = obj["metadata"]
        labels, notes = meta["labels"], meta["annotations"]
        stage, round_ = labels["nvcregen.io/stage"], int(labels["nvcregen.io/round"])
        tests = notes["nvcregen.io/tests"].split(",")
        nodes = tuple(notes["nvcregen.io/nodes"].split(","))
        where = folder / "logs" / meta["namespace"]
        if obj["kind"] == "Job":
            for index, node in enumerate(nodes):
                pod = pod_name(meta["name"], index)
                sections = []
                for test in tests:
                    start = _start(f"{pod}-{test}")
                    if test.startswith("dcgm-"):
                        body = dcgm_body(node, pod, start)
                    elif test == "link-counters":
                        body = passing_body(node, pod, start)
                    elif test in COLLECTIVES:
                        body = _nccl(stage, test, (node,), (pod,), busbw, seen)
                    else:  # another kind's section (burn-in, ...): the test's edit writes it
                        body = ""
                    sections.append(Section(stage, test, round_, node, pod, start, body))
                found.append(PackLog(where / f"{pod}.log", meta["name"], sections, node))
            continue
        launcher = f"{meta['name']}-launcher-0-0-{zlib.crc32(meta['name'].encode()) % 36**5:05x}"
        sections = []
        for test in tests:
            body = _nccl(stage, test, nodes, (), busbw, seen)
            body += f"nvcregen: {test} exit=0 seconds=300\n"
            start = _start(f"{meta['name']}-{test}")
            sections.append(Section(stage, test, round_, "", "", start, body))
        found.append(PackLog(where / f"{launcher[:63]}.log", meta["name"], sections))
    return found


def write_packed_logs(
    folder: Path, text: str, busbw: Busbw = healthy, edit: Edit | None = None
) -> Path:
    """Write every packed run's logs (after `edit`) and the exported Jobs and TrainJobs."""
    logs = packed_logs(text, folder, busbw)
    if edit is not None:
        edit(logs)
    for log in logs:
        log.path.parent.mkdir(parents=True, exist_ok=True)
        log.path.write_text("".join(s.text() for s in log.sections), encoding="utf-8")
    objects = [m.obj for m in compiled(text) if m.kind in {"TrainJob", "Job"}]
    listing = dump_yaml({"apiVersion": "v1", "kind": "List", "items": objects})
    (folder / "objects.yaml").write_text(listing, encoding="utf-8")
    return folder


def pod_log(logs: list[PackLog], test: str, round_: int, node: str) -> PackLog:
    """The single-node stage's pod log of one node and round that runs `test`."""
    (found,) = [
        log
        for log in logs
        if log.run.startswith("single-node-")
        and re.search(rf"-r{round_}-c\d+$", log.run)
        and log.node == node
        and any(s.test == test for s in log.sections)
    ]
    return found


def launcher_log(logs: list[PackLog], round_: int, group: int) -> PackLog:
    """The two-node stage's launcher log of one round and node group."""
    (found,) = [log for log in logs if log.run.endswith(f"-r{round_}-g{group}")]
    return found


def section(log: PackLog, test: str) -> int:
    """The index of a test's section in a log."""
    return next(i for i, s in enumerate(log.sections) if s.test == test)


def failed(log: PackLog, test: str, rc: int = 1) -> None:
    """The test's section ended with exit code `rc`."""
    i = section(log, test)
    log.sections[i] = replace(log.sections[i], rc=rc)
