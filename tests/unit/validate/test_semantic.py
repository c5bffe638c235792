"""Tests of nvcregen.validate.semantic: every NVC3xx code, where it points and how bad it is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from sitefactory import FILE, POOL, STAGES, catalog, edit, line_of, parse, plan_of, site_yaml

from nvcregen.core.errors import Diagnostic, Severity, has_errors
from nvcregen.validate import semantic
from nvcregen.validate.semantic import check_plan, check_references

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
TWO_POOLS = "- {name: a, model: H100, nodes: [n1, n2]}\n- {name: b, model: H100, nodes: [n3, n4]}"
ONE_NODE = "- {name: gpu, model: H100, nodes: [n1], nics: {count: 0, fabric: tcp, speed: 25Gb/s}}"
TCP_STAGES = edit(STAGES, "[nccl-all-reduce]", "[nccl-all-reduce-tcp]")
TAG_ONLY = f"nccl: nvcr.io/nvidia/pytorch:26.01-py3\ndcgm: nvcr.io/nvidia/dcgm@sha256:{'a' * 64}"
TCP_POOL = (
    "- {name: gpu, model: H100, nodes: [n1, n2], nics: {count: 2, fabric: tcp, speed: 25Gb/s}}"
)


def diagnose(text: str, *, strict: bool = False) -> list[Diagnostic]:
    """Semantic checks, then the budget of the plan, as `validate/site.py` chains them."""
    site, doc = parse(text)
    diags = check_references(site, catalog(), doc, strict=strict)
    if has_errors(diags):
        return diags
    return diags + check_plan(plan_of(site, doc))


def only(diags: list[Diagnostic], code: str) -> Diagnostic:
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, diags
    return found[0]


@dataclass(frozen=True)
class Case:
    """A site with one problem: the code, severity and pointer expected, and the text
    whose line the diagnostic must report."""

    text: str
    code: str
    severity: Severity
    path: str
    at: str
    message: str


def thresholds(line: str) -> str:
    return site_yaml(thresholds=line)


CASES = {
    "unknown-model": Case(
        edit(site_yaml(), "model: H100", "model: H1OO"),
        "NVC301", E, "/spec/nodePools/0/model", "model: H1OO", "unknown GPU model 'H1OO'",
    ),
    "unknown-test": Case(
        edit(site_yaml(), "[dcgm-l1, nccl-all-reduce]", "[dcgm-l1, nccl-all-reduse]"),
        "NVC302", E, "/spec/readiness/stages/0/tests/1", "nccl-all-reduse", "unknown test",
    ),
    "wrong-scope": Case(
        edit(site_yaml(), "tests: [nccl-all-reduce]\n", "tests: [nccl-all-reduce, dcgm-l2]\n"),
        "NVC303", E, "/spec/readiness/stages/1/tests/1", "dcgm-l2",
        "test 'dcgm-l2' does not run at scope inter-node",
    ),
    "stage-without-pool": Case(
        site_yaml(
            pools=TWO_POOLS,
            stages="- {name: first, scope: intra-node, tests: [dcgm-l1]}\n"
            "- {name: second, scope: intra-node, pool: b, tests: [dcgm-l1]}",
        ),
        "NVC304", E, "/spec/readiness/stages/0", "name: first",
        "stage 'first' must name its pool",
    ),
    "unknown-pool": Case(
        site_yaml(stages="- {name: first, scope: intra-node, pool: gpx, tests: [dcgm-l1]}"),
        "NVC304", E, "/spec/readiness/stages/0/pool", "gpx", "unknown node pool 'gpx'",
    ),
    "duplicate-pool": Case(
        site_yaml(pools=TWO_POOLS.replace("name: b", "name: a")),
        "NVC305", E, "/spec/nodePools/1/name", "nodes: [n3", "node pool 'a' is defined twice",
    ),
    "duplicate-stage": Case(
        edit(site_yaml(), "name: fabric", "name: node"),
        "NVC305", E, "/spec/readiness/stages/1/name", "node\n        scope: inter-node",
        "stage 'node' is defined twice",
    ),
    "duplicate-test": Case(
        edit(site_yaml(), "[dcgm-l1, nccl-all-reduce]", "[dcgm-l1, nccl-all-reduce, dcgm-l1]"),
        "NVC305", E, "/spec/readiness/stages/0/tests/2", "nccl-all-reduce, dcgm-l1]",
        "test 'dcgm-l1' is listed twice in stage 'node'",
    ),
    "threshold-not-planned": Case(
        thresholds('- {test: nccl-alltoall, scope: inter-node, busbw: ">= 100 GB/s"}'),
        "NVC306", E, "/spec/thresholds/0/test", "nccl-alltoall",
        "the plan does not run nccl-alltoall at scope inter-node",
    ),
    "transport-ib-intra-node": Case(
        thresholds("- {test: nccl-all-reduce, scope: intra-node, transport: IB}"),
        "NVC307", E, "/spec/thresholds/0/transport", "IB}",
        "threshold expects RDMA (IB) but this test runs over none",
    ),
    "transport-socket-over-rdma": Case(
        thresholds("- {test: nccl-all-reduce, scope: inter-node, transport: Socket}"),
        "NVC307", E, "/spec/thresholds/0/transport", "Socket",
        "threshold expects Socket but this test runs over rdma",
    ),
    "measure-not-measured": Case(
        thresholds('- {test: nccl-all-reduce, scope: inter-node, goodput: ">= 0.9"}'),
        "NVC308", E, "/spec/thresholds/0/goodput", '">= 0.9"',
        "nccl-all-reduce does not measure goodput",
    ),
    "duration-out-of-order": Case(
        site_yaml(window="{maxConcurrentJobs: 2, deadline: 30m1h, gpuHours: 500}"),
        "NVC309", E, "/spec/readiness/window/deadline", "30m1h", "use h, m, s, ms once each",
    ),
    "threshold-without-unit": Case(
        thresholds('- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 380"}'),
        "NVC309", E, "/spec/thresholds/0/busbw", '">= 380"', "needs a unit",
    ),
    "speed-with-size-unit": Case(
        edit(site_yaml(), "speed: 400Gb/s", "speed: 400KB/s"),
        "NVC309", E, "/spec/nodePools/0/nics/speed", "400KB/s", "unknown bandwidth unit 'KB/s'",
    ),
    "dcgm-l4-without-hostengine": Case(
        edit(site_yaml(), "[dcgm-l1, nccl-all-reduce]", "[dcgm-l4, nccl-all-reduce]"),
        "NVC310", E, "/spec/readiness/stages/0/tests/0", "dcgm-l4",
        "dcgm-l4 needs a standalone DCGM hostengine",
    ),
    "selector-without-node-count": Case(
        edit(site_yaml(), "nodes: [gpu-1, gpu-2]", "selector: {role: gpu}"),
        "NVC311", E, "/spec/nodePools/0/selector", "{role: gpu}",
        "a selector pool needs nodeCount",
    ),
    "one-node-per-job": Case(
        edit(site_yaml(), "scope: inter-node\n", "scope: inter-node\n        nodesPerJob: 1\n"),
        "NVC311", E, "/spec/readiness/stages/1/nodesPerJob", "nodesPerJob: 1",
        "an inter-node stage needs at least 2 nodes per job",
    ),
    "one-node-pool-inter-node": Case(
        site_yaml(pools=ONE_NODE, stages=TCP_STAGES),
        "NVC311", E, "/spec/readiness/stages/1/nodesPerJob", "name: fabric",  # the stage
        "an inter-node stage needs at least 2 nodes per job",
    ),
    "more-nodes-per-job-than-nodes": Case(
        edit(site_yaml(), "scope: inter-node\n", "scope: inter-node\n        nodesPerJob: 3\n"),
        "NVC311", E, "/spec/readiness/stages/1/nodesPerJob", "nodesPerJob: 3",
        "3 nodes per job but pool 'gpu' has 2 nodes",
    ),
    "hca-count": Case(
        edit(site_yaml(), "hcas: [mlx5_0, mlx5_1]", "hcas: [mlx5_0]"),
        "NVC312", E, "/spec/nodePools/0/nics/hcas", "[mlx5_0]", "1 HCAs listed but count is 2",
    ),
    "rdma-without-resource-name": Case(
        edit(site_yaml(), "        resourceName: rdma/ib\n", ""),
        "NVC312", W, "/spec/nodePools/0/nics/count", "count: 2",
        "NVCRE will request nvidia.com/mlnxnics",
    ),
    # 2 nodes x 8 GPUs: dcgm-l1 5m + nccl 10m per node, nccl 10m on both: 400 GPU-minutes,
    # and 5m + 10m + 10m = 25m of wall-clock time at two jobs at a time.
    "over-gpu-hours": Case(
        site_yaml(window="{maxConcurrentJobs: 2, deadline: 12h, gpuHours: 6}"),
        "NVC313", E, "/spec/readiness/window/gpuHours", "gpuHours: 6",
        # worst case: 16 GPUs x (3m dcgm-l1 + 13m all-reduce + 33m two-node all-reduce)
        "needs 13.1 GPU-hours (expected 6.4), over the budget of 6",
    ),
    "past-deadline": Case(
        site_yaml(window="{maxConcurrentJobs: 2, deadline: 20m, gpuHours: 500}"),
        "NVC313", E, "/spec/readiness/window/deadline", "20m",
        "takes 49m (expected 24m), past the deadline of 20m",
    ),
    "tag-only-site-image": Case(
        site_yaml(images=TAG_ONLY),
        "NVC314", W, "/spec/images/nccl", "pytorch:26.01-py3\n",
        "nccl image nvcr.io/nvidia/pytorch:26.01-py3 is pinned by tag only",
    ),
    "gpus-per-node": Case(
        edit(site_yaml(), "model: H100\n", "model: H100\n      gpusPerNode: 4\n"),
        "NVC315", W, "/spec/nodePools/0/gpusPerNode", "gpusPerNode: 4",
        "4 GPUs per node differs from the catalog's 8 for H100",
    ),
    "bits-per-second-threshold": Case(
        thresholds('- {test: nccl-all-reduce, scope: inter-node, busbw: ">= 2880 Gb/s"}'),
        "NVC316", INFO, "/spec/thresholds/0/busbw", "2880 Gb/s",
        ">= 2880 Gb/s is in bits per second; compiled as >= 360.0 GB/s (bytes)",
    ),
    "unconfirmed-product-label": Case(
        edit(site_yaml(), "model: H100", "model: H20-3e"),
        "NVC317", INFO, "/spec/nodePools/0/model", "H20-3e",
        "the nvidia.com/gpu.product label for H20-3e is not confirmed",
    ),
    "fabric-test-over-tcp": Case(
        site_yaml(pools=TCP_POOL),
        "NVC318", W, "/spec/readiness/stages/1/tests/0", "tests: [nccl-all-reduce]\n",
        "nccl-all-reduce will run over TCP: pool 'gpu' has no RDMA NICs",
    ),
    "burn-in-without-figures": Case(
        edit(
            edit(site_yaml(), "model: H100", "model: A100"),
            "tests: [dcgm-l1, nccl-all-reduce]", "tests: [dcgm-l1, burn-in, nccl-all-reduce]",
        ),
        "NVC337", E, "/spec/readiness/stages/0/tests/1", "burn-in",
        "the catalog states none for A100 (it does for: H100, H200, H20, L20)",
    ),
    "numa-groups": Case(
        site_yaml(pools=POOL + "  topology:\n    numa: [[0, 1, 2], [4, 5, 6, 7]]\n"),
        "NVC320", E, "/spec/nodePools/0/topology/numa", "[[0, 1, 2]",
        "NUMA groups list GPUs [0, 1, 2, 4, 5, 6, 7], expected each of 0..7 once",
    ),
}  # fmt: skip


def test_the_base_site_has_no_diagnostics() -> None:
    assert diagnose(site_yaml()) == []


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_diagnostic(case: Case) -> None:
    diag = only(diagnose(case.text), case.code)
    assert diag.severity is case.severity
    assert diag.path == case.path
    assert diag.span.file == FILE
    assert diag.span.line == line_of(case.text, case.at), case.text
    assert case.message in diag.message


def test_every_code_semantic_emits_has_a_case() -> None:
    source = Path(semantic.__file__).read_text(encoding="utf-8")
    emitted = set(re.findall(r"codes\.(NVC3\d\d)\.code", source))
    assert emitted == {c.code for c in CASES.values()}


def test_unknown_names_suggest_the_closest_known_one() -> None:
    assert only(diagnose(CASES["unknown-model"].text), "NVC301").hint == "did you mean 'H100'?"
    hint = only(diagnose(CASES["unknown-test"].text), "NVC302").hint
    assert hint == "did you mean 'nccl-all-reduce'?"


def test_strict_turns_a_tag_only_image_into_an_error() -> None:
    text = CASES["tag-only-site-image"].text
    assert only(diagnose(text, strict=False), "NVC314").severity is W
    strict = only(diagnose(text, strict=True), "NVC314")
    assert strict.severity is E
    assert strict.path == "/spec/images/nccl"


def test_catalog_default_images_warn_at_the_images_block() -> None:
    text = site_yaml(images="mirror: registry.internal/mirror")
    diags = [d for d in diagnose(text) if d.code == "NVC314"]
    assert [(d.path, d.severity) for d in diags] == [("/spec/images", W), ("/spec/images", W)]
    assert ["dcgm image" in diags[0].message, "nccl image" in diags[1].message] == [True, True]
    assert {d.span.line for d in diags} == {line_of(text, "mirror:")}
    assert {d.severity for d in diagnose(text, strict=True) if d.code == "NVC314"} == {E}


def test_budget_is_checked_only_when_everything_else_passes() -> None:
    text = edit(CASES["over-gpu-hours"].text, "[dcgm-l1, nccl", "[dcgm-l9, nccl")
    codes = [d.code for d in diagnose(text)]
    assert codes == ["NVC302"]


def test_budget_names_the_largest_consumers() -> None:
    diag = only(diagnose(CASES["over-gpu-hours"].text), "NVC313")
    assert diag.hint.startswith(
        "largest: fabric/nccl-all-reduce 8.8 GPU-h, node/nccl-all-reduce 3.5 GPU-h, "
        "node/dcgm-l1 0.8 GPU-h;"
    )
    assert diag.notes == (
        "stage node: expected 8m, worst case 16m",
        "stage fabric: expected 16m, worst case 33m",
    )
    late = only(diagnose(CASES["past-deadline"].text), "NVC313")
    assert late.hint.startswith(
        "longest: fabric/nccl-all-reduce 33m, node/nccl-all-reduce 13m, node/dcgm-l1 3m;"
    )


def test_diagnostics_are_sorted_by_position() -> None:
    text = edit(CASES["hca-count"].text, "model: H100", "model: H100\n      gpusPerNode: 4")
    diags = diagnose(text)
    assert [d.code for d in diags] == ["NVC315", "NVC312"]
    assert diags == sorted(diags, key=Diagnostic.sort_key)
