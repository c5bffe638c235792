"""Load the catalog folder into typed entries, with diagnostics for bad entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from nvcregen.catalog.charts import ChartEntry, chart_key
from nvcregen.catalog.kindblocks import entry_model
from nvcregen.catalog.models import (
    Baseline,
    DefaultImages,
    ExampleDigests,
    HardwareEntry,
    PodSizes,
    TestEntry,
)
from nvcregen.catalog.physics_data import PhysicsData
from nvcregen.core import codes
from nvcregen.core.datafiles import data_dir
from nvcregen.core.errors import Diagnostic, NvcregenError, has_errors
from nvcregen.spec.fast import fast_document
from nvcregen.spec.parse import parse_model

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Catalog:
    """Every catalog entry, keyed for look-up, with the file each came from."""

    hardware: dict[str, HardwareEntry]
    tests: dict[str, TestEntry]
    baselines: dict[str, Baseline]
    images: DefaultImages
    physics: PhysicsData
    pods: PodSizes
    origins: dict[str, str] = field(default_factory=dict)
    charts: dict[str, ChartEntry] = field(default_factory=dict)
    examples: ExampleDigests | None = None

    def find_chart(self, name: str, version: str) -> ChartEntry | None:
        """Return what a chart version installs (`kubeflow-trainer`, `2.2.1`), if known."""
        return self.charts.get(chart_key(name, version))

    def find_hardware(self, model: str) -> HardwareEntry | None:
        """Return the entry for a model name such as `H20-3e` (case and spaces ignored)."""
        return self.hardware.get(model_key(model))

    def origin(self, kind: str, name: str) -> str:
        """Return the catalog-relative file an entry came from, e.g. `tests/dcgm-l1.yaml`."""
        return self.origins[f"{kind}/{name}"]


def model_key(model: str) -> str:
    """Normalise a GPU model name for look-up: `RTX PRO 6000` -> `rtx-pro-6000`."""
    return "-".join(model.lower().replace("_", " ").replace("-", " ").split())


def load_catalog(root: Path | None = None) -> Catalog:
    """Read and validate the catalog; raise `NvcregenError` when any entry is invalid."""
    root = root or data_dir("catalog")
    diags: list[Diagnostic] = []
    origins: dict[str, str] = {}
    hardware = _load_folder(
        root, "hardware", HardwareEntry, diags, origins, lambda e: model_key(e.model)
    )
    tests = _load_folder(root, "tests", entry_model(), diags, origins, lambda e: e.name)
    baselines = _load_folder(root, "baselines", Baseline, diags, origins, lambda e: e.name)
    images = _load_one(root / "images.yaml", "catalog/images.yaml", DefaultImages, diags)
    physics = _load_one(root / "physics.yaml", "catalog/physics.yaml", PhysicsData, diags)
    pods = _load_one(root / "pods.yaml", "catalog/pods.yaml", PodSizes, diags)
    charts = _load_folder(root, "charts", ChartEntry, diags, origins, lambda e: e.key)
    examples_file = root / "example-digests.yaml"
    examples = _load_one(examples_file, "catalog/example-digests.yaml", ExampleDigests, diags)
    if has_errors(diags) or images is None or physics is None or pods is None:
        raise NvcregenError(diags)
    return Catalog(hardware, tests, baselines, images, physics, pods, origins, charts, examples)


def _load_folder(
    root: Path,
    kind: str,
    model: type[M],
    diags: list[Diagnostic],
    origins: dict[str, str],
    key: object,
) -> dict[str, M]:
    entries: dict[str, M] = {}
    for file in sorted((root / kind).glob("*.yaml")):
        rel = f"{kind}/{file.name}"
        entry = _load_one(file, f"catalog/{rel}", model, diags)
        if entry is not None:
            name = key(entry)  # type: ignore[operator]
            entries[name] = entry
            origins[f"{kind}/{name}"] = rel
    return entries


def _load_one(file: Path, display: str, model: type[M], diags: list[Diagnostic]) -> M | None:
    fast = fast_document(file, display)
    if fast is not None:
        entry, _ = parse_model(fast, model, code=codes.NVC220.code)
        if entry is not None:
            return entry
    # Something is wrong: load again, keeping positions, to say where.
    from nvcregen.spec.load import load_file

    doc, load_diags = load_file(file, display)
    diags.extend(load_diags)
    if doc is None:
        return None
    entry, parse_diags = parse_model(doc, model, code=codes.NVC220.code)
    diags.extend(parse_diags)
    return entry
