"""`nvcregen init`: write a commented starter Site for one catalog GPU model.

`nvcregen.scaffold.starter` decides what the site holds (and that it validates); this module
writes it as YAML through the jinja2 template `nvcregen/compile/templates/site.yaml.j2`,
every value as a scalar that reads back as itself, and never replaces an existing file.
"""

from __future__ import annotations

import json
import os
import re
import statistics
from pathlib import Path

from nvcregen.catalog.load import Catalog, model_key
from nvcregen.catalog.models import HardwareEntry
from nvcregen.compile.templating import render_template
from nvcregen.core import units
from nvcregen.core.atomicfile import FileWriteError, write_file
from nvcregen.plan.images import source_image
from nvcregen.scaffold.starter import (
    PRODUCT_LABEL,
    RETESTS,
    ROUNDS,
    Draft,
    ScaffoldError,
    Starter,
    draft_site,
    find_model,
)

__all__ = ["ScaffoldError", "Starter", "init_command", "starter_text", "write_starter"]

SCHEMA_FILE = Path("schemas") / "site.v1alpha1.json"

_PLAIN = re.compile(
    r"[A-Za-z]([A-Za-z0-9._/@:-]*[A-Za-z0-9._/-])?|[0-9]+(\.[0-9]+)?[A-Za-z][A-Za-z/]*"
)
_RESERVED = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def yaml_scalar(text: str, *, flow: bool = False) -> str:
    """Write a string plain when YAML 1.1 and 1.2 both read it back as that string.

    Inside a flow collection (`flow`) a `:` is quoted too: older YAML 1.1 readers take
    it for a mapping indicator there.
    """
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED and not (flow and ":" in text):
        return text
    return json.dumps(text)  # a JSON string is a valid double-quoted YAML scalar


def flow_list(items: list[str] | tuple[str, ...]) -> str:
    """Write a short list in flow style: `[a, b]`."""
    return "[" + ", ".join(yaml_scalar(i, flow=True) for i in items) + "]"


def init_command(root: Path, starter: Starter, out: Path | None) -> tuple[str, str]:
    """Run `nvcregen init`: return (text for stdout, message for stderr).

    The starter goes to `out` (default `sites/<name>.yaml` under `root`), or to stdout
    when `out` is `-`; an existing file is never replaced.

    Raises:
        ScaffoldError: When the request cannot become a valid site, or the file exists.

    """
    from nvcregen.catalog.load import load_catalog

    catalog = load_catalog()
    if out is not None and str(out) == "-":
        model = find_model(catalog, starter.model).model
        return starter_text(starter, catalog), f"nvcregen: starter site for {model} nodes"
    path = out if out is not None else Path("sites") / f"{starter.name}.yaml"
    target = path if path.is_absolute() else root / path
    display = _display(target, root)
    if target.exists():
        raise ScaffoldError(f"{display} already exists; choose another --out or --name")
    write_starter(target, starter_text(starter, catalog, site_file=display))
    done = f"nvcregen: wrote {display}; next: nvcregen validate {display}"
    if not (root / SCHEMA_FILE).is_file():
        done += f"\n  for editor completion: mkdir -p schemas && nvcregen schema > {SCHEMA_FILE}"
    return "", done


def write_starter(path: Path, text: str) -> None:
    """Write the starter to a new file, whole or not at all; nothing is ever replaced."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, text, replace=False)
    except FileExistsError:
        raise ScaffoldError(
            f"{path.as_posix()} already exists; choose another --out or --name"
        ) from None
    except FileWriteError as exc:
        raise ScaffoldError(str(exc)) from exc
    except OSError as exc:  # the folder cannot be made
        raise ScaffoldError(
            f"cannot make {path.parent.as_posix()}/: {exc.strerror or exc}"
        ) from exc


def starter_text(starter: Starter, catalog: Catalog, *, site_file: str = "") -> str:
    """Return the commented starter site; `site_file` is where it will be written.

    Raises:
        ScaffoldError: For an unknown model, a name that is no DNS label, or a plan
            that no single window can hold.

    """
    draft, budget = draft_site(starter, catalog)
    hardware = draft.hardware
    site = draft.site()
    file = site_file or f"sites/{starter.name}.yaml"
    return render_template(
        "site.yaml.j2",
        schema_ref=_schema_ref(file),
        site_file=file,
        hardware_file=catalog.origin("hardware", model_key(hardware.model)),
        model_title=hardware.model,
        model=yaml_scalar(hardware.model),
        site_name=starter.name,
        kubernetes=starter.kubernetes,
        images=[(r, yaml_scalar(source_image(site, catalog, r))) for r in draft.roles(catalog)],
        pool=draft.pool,
        label_notes=_label_notes(hardware),
        product_labels=flow_list(hardware.product_labels),
        nodes=flow_list(starter.nodes) if starter.nodes else "",
        selector=f"{{{PRODUCT_LABEL}: {yaml_scalar(hardware.product_labels[0], flow=True)}}}",
        node_count=starter.node_count,
        gpus_per_node=hardware.gpus_per_node,
        nics=_nics(draft),
        nvlink=hardware.nvlink or "",
        numa=_numa_example(hardware.gpus_per_node),
        rounds=ROUNDS,
        worst_gpu_hours=budget.worst_gpu_hours,
        worst_wall=budget.worst_wall,
        max_concurrent=draft.max_concurrent,
        deadline=f"{draft.deadline_hours}h",
        gpu_hours=draft.gpu_hours,
        retests=RETESTS,
        stages=[
            {
                "name": s.name,
                "scope": s.scope,
                "tests": flow_list(s.tests),
                "comment": s.comment,
                "nodes_per_job": s.nodes_per_job,
            }
            for s in draft.stages
        ],
        stage_notes=draft.notes,
        example=_example_threshold(draft),
        baselines=_baseline_lines(catalog, hardware),
        repo_url=yaml_scalar(starter.repo_url) if starter.repo_url else "",
        engine=starter.engine,
    )


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _nics(draft: Draft) -> dict[str, object] | None:
    nics, fabric = draft.nics, draft.fabric
    if nics is None or fabric is None:
        return None
    note = f"Typical for {draft.hardware.model}: {nics.count} x {nics.speed} ({nics.fabric})."
    if draft.nics_asked:
        note = (
            f"As asked (--nics, --nic-speed): {nics.count} x {nics.speed} ({fabric}); the "
            "window below is sized for them."
        )
    if nics.fabric == "roce-or-ib" and draft.starter.fabric is None:
        note += " Set the fabric your nodes use: roce or ib."
    return {
        "count": nics.count,
        "hcas": flow_list([f"mlx5_{i}" for i in range(nics.count)]),
        "fabric": fabric,
        "speed": yaml_scalar(nics.speed),
        "rdma": fabric != "tcp",
        "note": note,
    }


def _numa_example(gpus: int) -> str:
    """Two NUMA nodes with half the GPUs each, the common layout: `[[0, 1], [2, 3]]`."""
    half = max(1, gpus // 2)
    groups = [list(range(half)), list(range(half, gpus))]
    return "[" + ", ".join(f"[{', '.join(map(str, g))}]" for g in groups if g) + "]"


def _label_notes(hardware: HardwareEntry) -> list[str]:
    check = f"kubectl get node -L {PRODUCT_LABEL}"
    if hardware.label_certain:
        return [f"The {PRODUCT_LABEL} values of these GPUs; compare with", f"`{check}`."]
    return [
        f"Not confirmed for {hardware.model}: the catalog assumes these {PRODUCT_LABEL}",
        f"values. Check a node with `{check}` and correct them.",
    ]


def _example_threshold(draft: Draft) -> str:
    inter = next((s for s in draft.stages if s.scope == "inter-node"), None)
    if inter is not None and "nccl-all-reduce" in inter.tests:
        return "nccl-all-reduce, scope: inter-node, transport: IB"
    if inter is not None:
        return f"{inter.tests[0]}, scope: inter-node, transport: Socket"
    return "nccl-all-reduce, scope: intra-node"


def _baseline_lines(catalog: Catalog, hardware: HardwareEntry) -> list[str]:
    lines = []
    for name, b in sorted(catalog.baselines.items()):
        if model_key(b.model) != model_key(hardware.model):
            continue
        median = statistics.median(r.busbw for r in b.rounds)
        nodes = f"{b.nodes} node{'' if b.nodes == 1 else 's'}"
        lines.append(
            f"{name}: {b.test} {b.scope} {b.transport} {b.at}, {nodes}, "
            f"median {units.format_gbs(median)} {b.unit}"
        )
    return lines


def _schema_ref(site_file: str) -> str:
    """The schema's path relative to the site file, as the yaml-language-server reads it."""
    folder = Path(site_file).parent
    return Path(os.path.relpath(SCHEMA_FILE, folder)).as_posix()
