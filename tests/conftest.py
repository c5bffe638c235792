"""Shared pytest options and fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from kubecontrolplane import ControlPlane, session

pytest_plugins = [
    "nodehealthlogs",  # its session fixture `rendered`: the node-health examples rendered once
    "archiveschemas",  # every archive a test collects fits schemas/archive.v1alpha1.json
    "rehearsetrees",  # `argocd_tree`, `flux_tree`: the trainer site compiled once per engine
]

# `make test` tries the same examples on every run and machine, so a property test that
# fails is a reproducible bug, not a flake in CI; `make fuzz` and `make fuzz-site`
# (NVCREGEN_FUZZ_EXAMPLES set) explore new examples each time.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("NVCREGEN_FUZZ_EXAMPLES") else "repeatable")

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden expectations from the current output; review `git diff` after",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def root() -> Path:
    return ROOT


# --- the real control plane (tests/kubecontrolplane.py) --------------------------------------

_PLANES: list[ControlPlane] = []


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd and kube-apiserver (built by tools/controlplane/build.sh), one per session."""
    for plane in session(tmp_path_factory.mktemp("controlplane")):
        _PLANES.append(plane)
        yield plane


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the control plane `controlplane`, to select or skip them."""
    for item in items:
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.controlplane)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how long the control plane took to start, when a test started it."""
    for plane in _PLANES:
        terminalreporter.write_line(plane.summary())
