"""The shell functions several kinds' scripts print are written once (`rail-helpers.sh.j2`
of the compiler's templates), imported by each kind's template by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcregen.compile.templating import render_packaged

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT / "nvcregen" / "compile" / "templates" / "rail-helpers.sh.j2"
USERS = {  # each script template and the shared functions it prints
    ("rdma", "rdma-rails.sh.j2"): ("pick_gpu", "listening"),
    ("rdmapair", "rdma-pair-server.sh.j2"): ("pick_gpu", "listening"),
    ("rdmapair", "rdma-pair-client.sh.j2"): ("pick_gpu",),
    ("linkcounters", "link-counters.sh.j2"): ("listening",),
}
VALUES = {
    "hcas": ["mlx5_0", "mlx5_1"], "use_cuda": True, "duration_s": 0, "tool": "ib_write_bw",
    "gpus": 8, "size": 8388608, "qps": 4, "iterations": 5000, "port_base": 18515,
    "floor_gbps": 380.0, "rail_deadline_s": 120, "ready_file": "/tmp/ready",
    "traffic_s": 30, "traffic_deadline_s": 60, "deadline_s": 300, "wait_s": 60,
}  # fmt: skip


def function(text: str, name: str) -> str:
    """A shell function's definition in a script: its first line to its closing brace."""
    start = text.index(f"\n{name}() {{") + 1
    return text[start : text.index("\n}\n", start) + 3]


@pytest.mark.parametrize(("kind", "template"), sorted(USERS))
def test_a_shared_shell_function_is_defined_once_in_the_shared_file(
    kind: str, template: str
) -> None:
    source = (ROOT / "nvcregen" / "kinds" / kind / "templates" / template).read_text()
    shared = SHARED.read_text()
    script = render_packaged(f"nvcregen.kinds.{kind}", template, **VALUES)
    for name in ("pick_gpu", "listening"):
        assert f"{name}() {{" not in source  # imported, not copied
        if name in USERS[(kind, template)]:
            assert script.count(f"\n{name}() {{") == 1
            expected = function("\n" + shared, name).replace("{{ gpus }}", "8")
            assert function(script, name) == expected
        else:
            assert f"{name}() {{" not in script
    assert "mapfile -t buses" in script or "pick_gpu" not in USERS[(kind, template)]
