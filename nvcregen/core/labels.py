"""nvcregen's labels and annotations on the objects it generates, spelled out once.

Every readiness object carries SITE, STAGE and TEST (and ROUND in trainer mode), so
`collect`, `check` and the alerts can find a site's objects and tie results back to the
plan. SOURCE points each object at the site line it came from.
"""

from __future__ import annotations

PREFIX = "nvcregen.io/"

# Labels: where an object belongs in the plan.
SITE = f"{PREFIX}site"
STAGE = f"{PREFIX}stage"
TEST = f"{PREFIX}test"
ROUND = f"{PREFIX}round"

# Annotations: provenance and notes for reviewers.
SOURCE = f"{PREFIX}source"  # `<site file>#<JSON pointer>` of the site line
PREVIEW = f"{PREFIX}preview"  # what NVCRE's documentation leaves open, on preview objects
# What collect should find on a trainer-mode run: the transport, GPUDirect RDMA, the nodes.
EXPECTED_TRANSPORT = f"{PREFIX}expected-transport"
EXPECTED_GDRDMA = f"{PREFIX}expected-gdrdma"
NODES = f"{PREFIX}nodes"

# Field manager of the placement patches trainer mode writes into TrainJobs.
PLACEMENT_MANAGER = f"{PREFIX}placement"
