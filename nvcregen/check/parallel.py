"""Check many objects on every core: forked workers share the parent's warm caches."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from nvcregen.check.findings import Finding
from nvcregen.check.objects import object_findings

# Below this many objects, starting workers costs more than it saves.
PARALLEL_FROM = 400


@dataclass(frozen=True)
class Job:
    """One object to check and how."""

    obj: Mapping[str, Any]
    kube_version: str
    strict: bool
    old: Mapping[str, Any] | None


_JOBS: list[Job] = []


def check_objects(jobs: list[Job]) -> list[list[Finding]]:
    """Return `object_findings` for every job, in order, using all cores for large trees.

    Workers are forked after the first object has warmed the schema, CEL and policy
    caches, so each starts with compiled validators and receives only job indexes.
    """
    workers = min(os.cpu_count() or 1, 8)
    if (
        len(jobs) < PARALLEL_FROM
        or workers < 2
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return [_run(job) for job in jobs]
    results = [_run(jobs[0])]
    _JOBS[:] = jobs
    try:
        chunks = [range(i, len(jobs), workers) for i in range(1, 1 + workers)]
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            parts = list(pool.map(_run_chunk, chunks))
    finally:
        _JOBS.clear()
    by_index = {index: found for part in parts for index, found in part}
    return results + [by_index[i] for i in range(1, len(jobs))]


def _run(job: Job) -> list[Finding]:
    return object_findings(job.obj, kube_version=job.kube_version, strict=job.strict, old=job.old)


def _run_chunk(indexes: range) -> list[tuple[int, list[Finding]]]:
    return [(i, _run(_JOBS[i])) for i in indexes]
