"""The DCGM script's first line, run as a pod runs it (the compile tests of both modes)."""

from __future__ import annotations

import subprocess

from nvcregen.ingest.beginline import BeginLine
from nvcregen.ingest.beginline import begin_line as read_begin_line
from nvcregen.kinds.dcgm.kind import MARK

DOWNWARD = [
    {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
]


def begin_line(script: str, node: str) -> tuple[str, str]:
    """The node and pod the DCGM script's first line names, as `collect` reads them.

    The script is run by bash up to the line before DCGM starts, with the downward API's
    variables set; without them it stops (`${VAR:?}`), before DCGM runs.
    """
    head = script[: script.index("\n", script.index("start=$(date -u"))]
    env = {"PATH": "/usr/bin:/bin", "NODE_NAME": node, "POD_NAME": "pod-1"}
    done = subprocess.run(["bash", "-c", head], env=env, capture_output=True, text=True, check=True)
    found = read_begin_line(done.stdout, MARK)
    assert isinstance(found, BeginLine), done.stdout
    assert subprocess.run(["bash", "-c", head], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, check=False).returncode != 0  # fmt: skip
    return found.node, found.pod
