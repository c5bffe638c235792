"""Names, labels and deadlines of the runs trainer mode creates: TrainJobs and Jobs (pure).

Every run is its own object: one per test, round and node (group), so names carry the
round and the group or node after a hash of the content. Specs of TrainJobs and Jobs are
immutable, so a changed spec is a new name, never a rejected update.
"""

from __future__ import annotations

from nvcregen.compile.readiness.mpi import RUN_NAME_MAX
from nvcregen.core import units
from nvcregen.core.labels import ROUND, SITE, STAGE, TEST
from nvcregen.core.manifest import hashed_name
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site


def window_seconds(site: Site) -> int:
    """The test window in seconds: no run of the plan outlives it, queued or not."""
    return units.parse_duration(site.spec.readiness.window.deadline) // 1000


def trainer_run_name(site: Site, unit: TestUnit, digest: str, suffix: str) -> str:
    """`<site>-<stage>-<test>-<hash><suffix>`: an RFC 1035 label of at most 44 characters.

    When that is too long the site goes first (every object carries it as a label, and a
    site is one cluster), then the end of what is left; the hash and the suffix (round,
    group or node) always stay, so names stay unique.
    """
    limit = RUN_NAME_MAX - len(suffix)
    parts = [site.metadata.name, unit.stage.name, unit.test.name]
    if len("-".join(parts)) + 1 + len(digest) > limit:
        parts = parts[1:]
    return hashed_name(parts, digest, limit) + suffix


def unit_labels(site: Site, unit: TestUnit) -> dict[str, str]:
    """The labels naming a test's site, stage and test."""
    return {
        SITE: site.metadata.name,
        STAGE: unit.stage.name,
        TEST: unit.test.name,
    }


def run_labels(site: Site, unit: TestUnit, round_: int) -> dict[str, str]:
    """The labels of one run: its test's, and its round (from 1)."""
    return {**unit_labels(site, unit), ROUND: str(round_)}


def unit_source(unit: TestUnit) -> str:
    """The site pointer of a test in its stage."""
    index = unit.stage.tests.index(unit.test.name)
    return f"/spec/readiness/stages/{unit.stage_index}/tests/{index}"


def unit_catalog(unit: TestUnit) -> tuple[str, ...]:
    """The catalog files a test's objects come from: its hardware and its test entry."""
    return tuple(sorted({unit.pool.catalog_file, unit.test_file}))
