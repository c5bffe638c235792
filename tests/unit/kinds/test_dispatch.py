"""No module outside `nvcregen/kinds/` asks which kind a test is (issue 35, item 2).

Kinds are found through `kindapi.registry.kind_of(test)`; a test's block (`test.nccl`, ...)
read to tell kinds apart, or `test.per_node`, is the old dispatch this test keeps out.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "nvcregen"
KINDS = PACKAGE / "kinds"
# `test.dcgm is not None`, `unit.test.node is None`, `if test.nccl` / `test.dcgm and`,
# `test.per_node`, `test.kind == "node"`; a record's or a result's kind by name
# (`r.kind == "nccl"`, `result.kind == "dcgm"`, `kind == "rdma"`)
KIND_NAMES = "nccl|dcgm|node|training|burnin|nvbandwidth|rdma|rdmapair|linkcounters"
DISPATCH = re.compile(
    r"\btest\.(nccl|dcgm|node|training) is (not )?None"
    r"|\b(if|elif|and|or|not) (\w+\.)*test\.(nccl|dcgm|node|training)\b(?!\.)"
    r"|\btest\.per_node\b"
    r"|\b(test|t)\.kind [!=]= \"(nccl|dcgm|node|training)\""
    rf"|\bkind ?[!=]= ?[\"'](?:{KIND_NAMES})[\"']"
)


def dispatching() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if KINDS in path.parents:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        hits = [f"{n}: {t.strip()}" for n, t in enumerate(lines, 1) if DISPATCH.search(t)]
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    return found


def test_no_module_outside_the_kinds_asks_which_kind_a_test_is() -> None:
    found = dispatching()
    assert not found, "ask kindapi.registry.kind_of(test) instead:\n" + "\n".join(
        f"{f}:{h}" for f, hits in found.items() for h in hits
    )


def test_the_pattern_finds_each_old_form() -> None:
    for line in (
        "if test.dcgm is not None:",
        "    nodes = [u for u in units if u.test.node is None]",
        "    return 'dcgm' if unit.test.dcgm else 'nccl'",
        "if test.dcgm and test.dcgm.needs_hostengine:",
        "alone = unit.test.per_node",
        'frozenset(n for n, t in tests.items() if t.kind == "node")',
        'versions = {v for r in records if r.kind == "nccl" for v in r.versions}',
        'if r.kind != "nccl" and r.status == "ok" and not r.job_failed:',
        'if result.kind == "dcgm":',
        'in_network = kind == "rdma" and run.fabric == "ib"',
        "summary = tuple(summarize(nccl, at)) if kind == 'nccl' else ()",
    ):
        assert DISPATCH.search(line), line
    for line in (
        "nccl = unit.test.nccl",
        "assert nccl is not None",
        "kind_of(test).per_node",
        'in_network = path == "rdma" and run.fabric == "ib"',
        'if unit.network == "rdma":',
    ):
        assert not DISPATCH.search(line), line
