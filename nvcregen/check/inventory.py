"""`check --server`: the live nodes against each rendered site's inventory (NVC770-NVC772).

The tree's `index.json` names each site's source file; a site naming an inventory
(`spec.inventory`) has its drift reported at the node's entry in the inventory file.
The nodes are listed once per run.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from nvcregen.cluster.client import Cluster, ClusterError
from nvcregen.cluster.nodes import live_inventory
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity, Span
from nvcregen.fabric.drift import drift_diagnostics
from nvcregen.fabric.inventory import MAX_BYTES, Inventory
from nvcregen.fabric.inventoryfile import read_inventory
from nvcregen.spec.fast import parse_fast
from nvcregen.spec.load import load_document

UNREADABLE = codes.NVC773.code


def tree_drift(out: Path, root: Path, cluster: Cluster) -> list[Diagnostic]:
    """Drift of every rendered site that names an inventory; [] when none does."""
    inventories = sorted({name for site in _site_files(out, root) if (name := _inventory_of(site))})
    if not inventories:
        return []
    try:
        live = live_inventory(cluster)
    except ClusterError as exc:
        message = f"the live nodes cannot be compared with the inventory: {exc}"
        return [Diagnostic(Span(inventories[0]), Severity.WARNING, UNREADABLE, message)]
    found: list[Diagnostic] = []
    for name in inventories:
        found += _drift_of(root, name, live)
    return found


def _site_files(out: Path, root: Path) -> list[Path]:
    files = []
    for index in sorted(out.glob("*/index.json")):
        try:
            source = json.loads(index.read_text(encoding="utf-8")).get("source") or {}
        except (OSError, ValueError):
            continue
        if isinstance(source, dict) and isinstance(source.get("file"), str):
            files.append(root / source["file"])
    return files


def _inventory_of(site: Path) -> str | None:
    try:
        raw = site.read_bytes()
        data = parse_fast(raw) if b"inventory" in raw else None
    except (OSError, yaml.YAMLError):  # an unreadable site is render's and check's to report
        return None
    spec = data.get("spec") if isinstance(data, dict) else None
    named = spec.get("inventory") if isinstance(spec, dict) else None
    return named if isinstance(named, str) else None


def _drift_of(root: Path, name: str, live: Inventory) -> list[Diagnostic]:
    path = root / name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return [Diagnostic(Span(name), Severity.WARNING, UNREADABLE, f"{name}: {exc.strerror}")]
    doc, diags = load_document(raw[: MAX_BYTES + 1], name, max_bytes=MAX_BYTES)
    inventory, problems = read_inventory(doc) if doc is not None else (None, [])
    if doc is None or inventory is None or len(raw) > MAX_BYTES:
        return diags + problems
    return drift_diagnostics(doc, inventory, live)
