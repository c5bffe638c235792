"""Every archive a test collects fits the published schema (schemas/archive.v1alpha1.json).

A pytest plugin (`conftest.py` names it): while each test runs, `collect`'s two engines
(`collect/collector.py`, trainer mode's `engines/readiness/trainer/collect.py`) build
their archives through a wrapper that keeps the JSON files; when the test ends, each is
validated against its definition in the shipped schema, and a file that does not fit
fails the test. Archives a test builds by hand (`build_archive` called with texts of its
own) are not collect's and are not checked here.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

SHIPPED = Path(__file__).resolve().parent.parent / "schemas" / "archive.v1alpha1.json"
ENGINES = ("nvcregen.collect.collector", "nvcregen.engines.readiness.trainer.collect")


@cache
def validators() -> dict[str, Draft202012Validator]:
    """Each JSON file of an archive and the validator of its definition in the shipped schema."""
    from nvcregen.results.archivemodel import FILES

    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    return {
        name: Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{m.__name__}"})
        for name, m in FILES.items()
    }


def schema_errors(files: Mapping[str, bytes]) -> list[str]:
    """Where an archive's JSON files do not fit the shipped schema (empty when they do)."""
    found = []
    for name, validator in validators().items():
        data = json.loads(files[name])
        found += [f"{name}: {e.json_path}: {e.message}" for e in validator.iter_errors(data)]
    return found


def _recording(build: Callable[..., Any], kept: list[Mapping[str, bytes]]) -> Callable[..., Any]:
    def build_and_keep(*args: Any, **kwargs: Any) -> Any:
        archive = build(*args, **kwargs)
        kept.append(archive.files)
        return archive

    return build_and_keep


@pytest.fixture(autouse=True)
def collected_archives_fit_the_schema(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    kept: list[Mapping[str, bytes]] = []
    for name in ENGINES:
        module = importlib.import_module(name)
        monkeypatch.setattr(module, "build_archive", _recording(module.build_archive, kept))
    yield
    problems = [p for files in kept for p in schema_errors(files)]
    if problems:
        pytest.fail(
            "an archive collect wrote does not fit schemas/archive.v1alpha1.json:\n"
            + "\n".join(problems[:20])
        )
