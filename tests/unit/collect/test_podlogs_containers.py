"""Which container of a per-node Job holds its log (`collect/podlogs.py`), read from an
API answer (untrusted) and asked of the kinds only when a Job is read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nvcregen.collect import podlogs

DCGM = "dcgm-diag"  # the first per-node kind's container, in registration order


def test_a_job_naming_a_kinds_container_reads_it() -> None:
    job = {"spec": {"template": {"spec": {"containers": [{"name": "node-health"}]}}}}
    assert podlogs._job_container(job) == "node-health"


def test_a_job_whose_spec_is_no_mapping_reads_the_first_kinds_container() -> None:
    for spec in (["x"], "x", 3, None):
        assert podlogs._job_container({"spec": spec}) == DCGM
    assert podlogs._job_container({"spec": {"template": {"spec": {"containers": "x"}}}}) == DCGM


@pytest.mark.slow
def test_importing_the_pod_log_reader_loads_no_kind() -> None:
    code = (
        "import sys, nvcregen.collect.podlogs;"
        "print(sorted(m for m in sys.modules if m.startswith('nvcregen.kinds.')))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
