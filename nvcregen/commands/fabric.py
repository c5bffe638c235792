"""`nvcregen inventory` and `nvcregen drill`: a site's nodes as a file, and a fault replayed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from nvcregen.commands.common import KUBECONFIG
from nvcregen.core import codes
from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import one_line

BAD_EXPORT = codes.NVC780.code
BAD_FAULT = codes.NVC781.code
BAD_CABLING = codes.NVC790.code
BAD_RAIL = codes.NVC792.code


@click.command("inventory")
@click.option(
    "--from",
    "source",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A saved `kubectl get nodes -o yaml` (a v1 List).",
)
@click.option("--context", help="Read the nodes from this kubeconfig context instead.")
@KUBECONFIG
@click.option(
    "--cabling",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A CSV of each HCA's switch port (node,hca,switch,port), from the cabling map.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the inventory here (atomically); standard output when left out.",
)
def inventory(
    source: Path | None,
    context: str | None,
    kubeconfig: Path | None,
    cabling: Path | None,
    output: Path | None,
) -> None:
    """Write a site's node inventory: GPUs, NICs, fabric labels, taints, driver and CUDA.

    Sorted and deterministic, to review in a pull request; a site names it in
    `spec.inventory`, and `validate`, `plan`, `check --server` and `collect` use it.
    With --cabling, each HCA's switch port too: failing rails and ports are named by it.
    """
    from nvcregen.emit.canonical import dump_yaml
    from nvcregen.fabric.inventory import InventoryError, from_node_list, from_nodes, to_data

    if (source is None) == (context is None):
        _fail("give exactly one of --from FILE or --context CTX")
    try:
        if source is not None:
            found = from_node_list(_read_export(source), source.name)
        else:
            found = from_nodes(_live_nodes(context, kubeconfig), f"context {context}")
    except InventoryError as exc:
        _fail(f"{BAD_EXPORT}: {exc}")
    if cabling is not None:
        found = _cabled(found, cabling)
    header = "nvcregen inventory: review changes; a site names this file in spec.inventory"
    data = to_data(found)
    for node in data["nodes"]:  # the file is committed, and validate refuses a secret in it
        held = _secret_in(node, "")
        if held is not None:
            where, what = held
            _fail(f"{BAD_EXPORT}: node {node['name']}, {where} holds {what}; nothing written")
    text = dump_yaml(data, header=header)
    if output is None:
        click.echo(text, nl=False)
        return
    from nvcregen.core.atomicfile import FileWriteError, write_file

    try:
        write_file(output, text)
    except FileWriteError as exc:
        _fail(str(exc))
    click.echo(f"nvcregen: wrote {output} ({len(found.nodes)} nodes)", err=True)


def _secret_in(value: object, where: str) -> tuple[str, str] | None:
    """The first string (key or value) under `value` that holds a secret: (pointer, what)."""
    from nvcregen.core.secrets import URL_CREDENTIALS, find_secret
    from nvcregen.spec.positions import escape

    if isinstance(value, str):
        what = find_secret(value)
        return (
            None
            if what is None
            else (where, "a password in a URL" if what == URL_CREDENTIALS else what)
        )
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        pointer = f"{where}/{escape(str(key))}"
        found = _secret_in(key, pointer) if isinstance(key, str) else None
        found = found or _secret_in(item, pointer)
        if found is not None:
            return found
    return None


def _read_export(path: Path) -> Any:
    """The export's data: at most 64 MiB, YAML without aliases (or JSON)."""
    import yaml

    from nvcregen.fabric.inventory import MAX_BYTES
    from nvcregen.spec.bounded import read_limited
    from nvcregen.spec.fast import parse_fast

    try:
        raw = read_limited(path, MAX_BYTES)  # a regular file only: a FIFO would block
    except OSError as exc:
        _fail(f"{BAD_EXPORT}: {path} cannot be read: {exc.strerror or exc}")
    if raw is None:
        _fail(f"{BAD_EXPORT}: {path} is over {MAX_BYTES // 2**20} MiB")
    try:
        return parse_fast(raw)
    except yaml.YAMLError as exc:
        _fail(f"{BAD_EXPORT}: {path} is not YAML without aliases: {str(exc).splitlines()[0]}")


def _cabled(found: Any, path: Path) -> Any:
    """The inventory with the cabling map's switch ports, or every problem (NVC790), exit 2."""
    from nvcregen.fabric.cabling import HINT, MAX_BYTES, CablingError, read_cabling, with_cabling
    from nvcregen.spec.bounded import read_limited

    try:
        raw = read_limited(path, MAX_BYTES)
    except OSError as exc:
        _fail(f"{BAD_CABLING}: {path} cannot be read: {exc.strerror or exc}")
    if raw is None:
        _fail(f"{BAD_CABLING}: {path} is over {MAX_BYTES // 2**20} MiB")
    try:
        return with_cabling(found, read_cabling(raw, str(path), found.nodes))
    except CablingError as exc:
        for problem in exc.problems[:200]:
            click.echo(f"nvcregen: {one_line(problem)}", err=True)
        count = len(exc.problems)
        _fail(
            f"{count} problem{'s' if count != 1 else ''} in the cabling map;"
            f" nothing written (hint: {HINT})"
        )


def _rail(fault: Any, text: str, site: Any, units: Any) -> Any:
    """`--fail NODE/HCA`: an HCA of the node's pool (`nics.hcas`), else NVC792."""
    from dataclasses import replace

    from nvcregen.fabric.railnames import cabled

    node, hca = (p.strip() for p in text.split("/", 1))
    pool = next(p for p in site.spec.node_pools if node in (p.nodes or ()))
    hcas = list(pool.nics.hcas) if pool.nics is not None else []
    if hca not in hcas:
        known = ", ".join(hcas[:16]) or "none: the pool names no nics.hcas"
        _fail(
            f"{BAD_RAIL}: --fail {one_line(text)}: {one_line(hca[:64])!r} is not an HCA of pool"
            f" {pool.name} (its HCAs: {known})"
        )
    inventory = next((u.pool.inventory for u in units if u.pool.spec.name == pool.name), None)
    return replace(fault, hca=hca, port=cabled(inventory, node, hca))


def _live_nodes(context: str | None, kubeconfig: Path | None) -> list[dict[str, Any]]:
    from nvcregen.cluster import ClusterError, connect
    from nvcregen.cluster.nodes import list_nodes

    try:
        return list_nodes(connect(context, kubeconfig))
    except ClusterError as exc:
        _fail(str(exc))


def _fail(message: str) -> NoReturn:
    click.echo(f"nvcregen: {message}", err=True)
    sys.exit(ExitCode.INVALID)


@click.command("drill")
@click.argument("site", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--fail",
    "fail",
    required=True,
    help="The fault to inject: a node (gpu-0517), a rail (gpu-0517/mlx5_3), or two leaves for a"
    " link (leaf-03,leaf-17).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def drill(site: Path, fail: str, fmt: str) -> None:
    """Replay a site's plan and retests with one fault injected: until it is named.

    A pure simulation (docs/design/0011-fabric.md): a group fails iff it holds the
    faulty node, or has nodes under both leaves of the faulty link. Prints the rounds,
    jobs, GPU-hours and wall time until the fault is named. Exit 0 when the injected
    fault is named, 1 when it is not, 2 for an invalid site or fault.
    """
    from nvcregen.catalog.load import load_catalog
    from nvcregen.chain.sites import site_root
    from nvcregen.commands.common import print_diagnostics
    from nvcregen.fabric.drill import run_drill
    from nvcregen.fabric.drillview import drill_json, drill_text
    from nvcregen.plan.coverage import plan_rounds
    from nvcregen.validate.site import load_site

    root = site_root(site, Path.cwd())  # the site's project: its inventory is relative to it
    loaded = load_site(site.read_bytes(), str(site), load_catalog(), root=root)
    errors = [d for d in loaded.diagnostics if d.is_error]
    if errors or loaded.plan is None:
        print_diagnostics(errors, "text", wrote="no drill")
        sys.exit(ExitCode.INVALID)
    planned, units = loaded.plan.site, loaded.plan.units
    placement = next((u.pool.placement for u in units if u.pool.placement is not None), None)
    leaf = dict(placement.leaf) if placement is not None else {}
    nodes = [n for p in planned.spec.node_pools for n in p.nodes or ()]
    fault = _fault(fail, set(nodes), set(leaf.values()))
    if "/" in fail:
        fault = _rail(fault, fail, planned, units)
    window = planned.spec.readiness.window.max_concurrent_jobs
    result = run_drill(plan_rounds(units), fault, leaf, nodes, window)
    click.echo(drill_json(result) if fmt == "json" else drill_text(result), nl=False)
    sys.exit(ExitCode.OK if result.found else ExitCode.DRIFT)


def _fault(text: str, nodes: set[str], leaves: set[str]) -> Any:
    """`--fail`'s fault: a node of the site, or two distinct leaves of its inventory."""
    from nvcregen.fabric.drill import Fault

    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 1 and "/" in parts[0]:  # a rail: its node must be the site's
        parts = [parts[0].split("/", 1)[0]]
    if len(parts) == 1:
        if parts[0] not in nodes:
            _fail(f"{BAD_FAULT}: --fail {parts[0]} is not a node the site names")
        return Fault(node=parts[0])
    if len(parts) != 2 or parts[0] == parts[1] or not set(parts) <= leaves:
        known = ", ".join(sorted(leaves)[:8]) or "none: the site has no placed fabric"
        _fail(f"{BAD_FAULT}: --fail {text} is not two leaves of the inventory (leaves: {known})")
    a, b = sorted(parts)
    return Fault(link=(a, b))
