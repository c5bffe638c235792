"""nvcregen's own label and annotation keys: one home, spelled out once.

A flat module of constants, imported by what writes them (`compile`) and what reads them
back (`check`, `collect`, `results`). Every key is under `PREFIX`.
"""

from __future__ import annotations

PREFIX = "nvcregen.io/"
"""The prefix of every nvcregen label and annotation; `compile` copies labels under it."""

SITE = "nvcregen.io/site"
STAGE = "nvcregen.io/stage"
TEST = "nvcregen.io/test"
ROUND = "nvcregen.io/round"
"""Labels: the site, stage, test and round (from 1) an object belongs to.

Every generated object carries `SITE`; readiness objects and trainer-mode runs carry
`STAGE` and `TEST`; trainer-mode runs also carry `ROUND`. `collect` selects by `SITE`
and places results by `STAGE`, `TEST` and `ROUND`.
"""

PARENT = "nvcregen.io/parent"
"""Label: the Argo CD Application that applies this child Application (a readiness
parent of step shards, issue 33); `argocd app delete -l` ends a window's children."""

SOURCE = "nvcregen.io/source"
PREVIEW = "nvcregen.io/preview"
# What of a preview follows from the WorkloadRun's own fields, and what from NVCRE's
# documented (or undocumented) behaviour.
PREVIEW_CERTAIN = "nvcregen.io/preview-certain"
PREVIEW_ASSUMED = "nvcregen.io/preview-assumed"
EXPECTED_TRANSPORT = "nvcregen.io/expected-transport"
EXPECTED_GDRDMA = "nvcregen.io/expected-gdrdma"
NODES = "nvcregen.io/nodes"
# a pair run's TrainJob: its `node` pod is a server whose log is evidence too (collect reads it)
SERVER_LOG = "nvcregen.io/server-log"
# A packed run's tests, in the order it runs them (its `test` label names the pack).
TESTS = "nvcregen.io/tests"
# APIs a site needs that nothing it generates installs (`group/version/Kind`, comma
# separated), on the namespace its runs use: `nvcregen check --server` tests they are served.
REQUIRES = "nvcregen.io/requires"
# Why a scrape endpoint does not verify its target's certificate (a self-signed target):
# stated in the object itself, where `check` (NVC622) and a reviewer read it.
UNVERIFIED_TLS = "nvcregen.io/unverified-tls"
"""Annotations: where an object came from (`site file#pointer`), what a preview object
leaves open, and what a trainer-mode run should find (transport, GPUDirect RDMA, nodes).
"""

PLACEMENT_MANAGER = "nvcregen.io/placement"
"""Field managers: the manager of the runtime patch pinning a TrainJob to its nodes."""

PERIODIC_LABEL = "nvcregen.io/periodic"
"""Label: "true" on a periodic CronJob, its Jobs and their pods (`readiness.periodic`);
the rehearsal finds a period's objects by it."""
