"""`nvcregen ingest node`: the node-health kind's `KindIngest` (`ingest/kindingest.py`).

The files are read and judged by `files.py` (`nvidia-smi -q -x` or its text, a kernel
log, or the script's own log), printed by `render.py` as text or markdown; with `--site`
and `--pool`, every node is judged against that pool's statement (drift, NVC817) and,
where the site names an inventory, against it. Its exit code is the run's own
(`files.NodeIngest.exit_code`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvcregen.ingest.kindingest import (
    IngestArgs,
    Ingested,
    IngestInputError,
    IngestOptionError,
    IngestUsageError,
)
from nvcregen.kinds.node.expect import NodeInventory, expectations_for
from nvcregen.kinds.node.files import ingest_nodes
from nvcregen.kinds.node.health import Expectations
from nvcregen.kinds.node.render import render_node_markdown, render_node_text


class NodeCommand:
    """`nvcregen ingest node`: judged alone, or against a site's pool (`--site`, `--pool`)."""

    name = "node"
    options = frozenset({"site", "pool", "markdown"})

    def ingest(self, files: Sequence[Path], args: IngestArgs) -> Ingested:
        """Each file read and each node judged (against the pool `args` names, if any).

        Raises:
            IngestUsageError: `--site` without `--pool`, or the reverse.
            IngestInputError: The site file does not load.
            IngestOptionError: The site names no such pool.

        """
        if (args.site is None) != (args.pool is None):
            raise IngestUsageError("give --site and --pool together")
        expected, inventory = (
            (None, None) if args.site is None or args.pool is None else _pool(args.site, args.pool)
        )
        result = ingest_nodes(files, expected, inventory)
        return Ingested(
            render_node_text(result),
            result.to_json(),
            result.diagnostics,
            result.exit_code != 0,
            markdown=render_node_markdown(result),
            exit_code=result.exit_code,
        )


def _pool(site: str, pool: str) -> tuple[Expectations, NodeInventory | None]:
    """The pool's statement in the site file (from the working folder) and its inventory."""
    from nvcregen.collect.collector import load_site_file
    from nvcregen.collect.model import CollectError
    from nvcregen.plan.resolve import resolve_pools

    try:
        loaded = load_site_file(Path.cwd(), site)
    except CollectError as exc:
        raise IngestInputError(str(exc), tuple(exc.diagnostics)) from exc
    pools = resolve_pools(loaded.plan.site, loaded.plan.catalog)
    spec = next((p for p in loaded.plan.site.spec.node_pools if p.name == pool), None)
    if spec is None:
        names = ", ".join(p.name for p in loaded.plan.site.spec.node_pools)
        raise IngestOptionError(
            f"no pool {pool!r} in {loaded.file.path} (pools: {names})", "--pool"
        )
    resolved = pools.get(pool)
    expected = expectations_for(
        spec,
        resolved.gpus_per_node if resolved else spec.gpus_per_node,
        f"{loaded.file.path} pool {pool}",
        (*resolved.product_labels, *resolved.hardware.product_labels) if resolved else (),
    )
    named = loaded.plan.site.spec.inventory
    if loaded.plan.inventory is None or named is None:
        return expected, None
    return expected, NodeInventory(named, loaded.plan.inventory, spec.gpus_per_node is not None)


INGEST = NodeCommand()
