"""Tests of trainer mode's DCGM diagnostics: a batch/v1 Job per level, round and node."""

from __future__ import annotations

from collections import Counter

import pytest
from dcgmscript import DOWNWARD, begin_line
from sitefactory import edit
from trainerfactory import compiled, example_manifests, example_text, of_kind, pinned_nodes

from nvcregen.core.manifest import Manifest

WINDOW_S = 16 * 3600  # the example's window.deadline


@pytest.fixture(scope="module")
def example() -> list[Manifest]:
    return list(example_manifests())


# DCGM Jobs


def test_dcgm_jobs_per_node_level_and_round(example: list[Manifest]) -> None:
    jobs = of_kind(example, "Job")
    seen = Counter(
        (
            j["metadata"]["labels"]["nvcregen.io/test"],
            j["metadata"]["labels"]["nvcregen.io/round"],
            j["metadata"]["annotations"]["nvcregen.io/nodes"],
        )
        for j in jobs
    )
    expected = {
        (test, str(r), node): 1
        for test in ("dcgm-l1", "dcgm-l2")
        for r in (1, 2, 3)
        for node in ("node-a", "node-b")
    }
    assert seen == expected
    for job in jobs:
        spec = job["spec"]
        assert spec["activeDeadlineSeconds"] == WINDOW_S
        assert spec["backoffLimit"] == 0
        pod = spec["template"]["spec"]
        assert pod["restartPolicy"] == "Never"
        assert "nodeName" not in pod  # scheduled, so it waits for the GPUs
        assert pinned_nodes(pod) == [job["metadata"]["annotations"]["nvcregen.io/nodes"]]
        (container,) = pod["containers"]
        assert container["resources"] == {
            "requests": {"cpu": "2", "memory": "8Gi"},
            "limits": {"nvidia.com/gpu": 8, "cpu": "8", "memory": "16Gi"},
        }
        level = job["metadata"]["labels"]["nvcregen.io/test"][-1]
        script = container["command"][2]
        assert f'dcgmi diag --host "$host" --run {level} --json' in script
        # dcgm-l1 is expected to take 30s + 1m and -l2 30s + 5m, so they time out after 3m
        # and 11m (x2, whole minutes): the outer deadline is a minute earlier.
        outer = {"1": 120, "2": 600}[level]
        assert f"timeout --kill-after=10s {outer}s dcgmi" in script
        node = job["metadata"]["annotations"]["nvcregen.io/nodes"]
        assert container["env"] == DOWNWARD  # the first line names the node and the pod
        assert begin_line(script, node) == (node, "pod-1")
        # Collect finds a run's pods by these labels.
        pod_labels = spec["template"]["metadata"]["labels"]
        assert pod_labels.items() <= job["metadata"]["labels"].items()
        assert {"nvcregen.io/site", "nvcregen.io/test", "nvcregen.io/round"} <= pod_labels.keys()


def test_dcgm_outer_deadline_of_the_field_report() -> None:
    """A 13m timeout gives the field report's 720 s outer deadline and 10 s grace."""
    text = example_text()
    text = edit(
        text,
        "        scope: intra-node\n",
        "        scope: intra-node\n        timeoutPerJob: 13m\n",
    )
    (job, *_) = of_kind(compiled(text), "Job", "dcgm-l2")
    assert (
        "timeout --kill-after=10s 720s dcgmi diag"
        in job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    )
