"""The cost of the plan check (the replay, docs/design/0008-replay.md) against render.

Both are timed in this process on the same sites: compiling each site as render does
(every layer, the render gate, the tree; the gate includes the replay), and the replay
alone on the same objects. The ratio is what the plan check adds to render.
"""

from __future__ import annotations

import time
from pathlib import Path

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Built, Options, build_site, compile_source
from nvcregen.check.replayed import replay_manifests

PLAN_GOAL = 0.10  # the replay, against compiling the same sites


def measure(sites: list[Path], root: Path) -> tuple[float, float]:
    """(seconds compiling every site as render does, seconds replaying them), best of 3."""
    catalog = load_catalog()
    options = Options(root=root)
    raws = [(p.read_bytes(), p.relative_to(root).as_posix()) for p in sites]
    built = [
        b for raw, shown in raws if isinstance(b := build_site(raw, shown, catalog, options), Built)
    ]
    render = replay = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for raw, shown in raws:
            compile_source(raw, shown, catalog, options)
        render = min(render, time.perf_counter() - start)
        start = time.perf_counter()
        for site in built:
            replay_manifests(site.manifests, site.plan)
        replay = min(replay, time.perf_counter() - start)
    return render, replay
