"""Exports and API answers are not trusted: no write outside the run folder, no alias bomb.

Issue #14, items 5 and 9: a name or namespace that is no Kubernetes name is refused
before anything is written; YAML with aliases is refused at once, at bounded cost.
"""

from __future__ import annotations

import copy
import re
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakelist import FakeKube, Fault, serve, write_kubeconfig
from hypothesis import given, settings
from hypothesis import strategies as st
from labstate import find, lab_state, write_export
from timebounds import HANG
from trainerlogs import write_saved_logs

from nvcregen.cli import main
from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions
from nvcregen.core.kube import name_problem
from nvcregen.results.archive import build_archive, object_path

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
TRAINER = str(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
FAST = RetryPolicy(attempts=2, backoff=0.01, max_backoff=0.02, timeout=(2.0, 2.0), restarts=1)
ESCAPES = ["../../escaped", "..", "a/../../b", "/etc/cron.d/x", "UPPER", "a b", ""]
BOMB = (
    "apiVersion: v1\nkind: List\nitems:\n"
    '- &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"- &{n} [{','.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


def every_file(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def hostile_state(field: str, value: str) -> list[dict[str, Any]]:
    state = copy.deepcopy(lab_state())
    cert = find(state, "Certification", "lab-two-node-0002")
    cert["metadata"][field] = value
    return state


@pytest.mark.parametrize("field", ["name", "namespace"])
@pytest.mark.parametrize("value", ESCAPES[:4])
def test_an_export_naming_a_path_outside_is_refused_before_any_write(
    tmp_path: Path, field: str, value: str
) -> None:
    folder = write_export(tmp_path / "export", hostile_state(field, value))
    before = every_file(tmp_path)
    with pytest.raises(CollectError, match="is not a Kubernetes"):
        collect(CollectOptions(str(SITE_FILE), tmp_path / "a" / "results", ROOT, from_dir=folder))
    assert every_file(tmp_path) == before  # nothing written, anywhere


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with serve(hostile_state("name", "../../../escaped")) as server:
        yield server


def test_an_api_answer_naming_a_path_outside_is_refused_before_any_write(
    tmp_path: Path, kube: FakeKube
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url)
    before = every_file(tmp_path)
    options = CollectOptions(
        str(SITE_FILE), tmp_path / "results", ROOT, "lab", config, policy=FAST, reclaim=True
    )
    with pytest.raises(CollectError, match=re.escape("unusable object: name '../../../escaped'")):
        collect(options)
    assert every_file(tmp_path) == before
    assert kube.deletes() == []


@pytest.mark.parametrize("name", ["...log", "ns/deep/x.log"])
def test_a_saved_log_naming_a_path_outside_is_refused(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "saved"
    write_saved_logs(folder)
    (folder / "logs" / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / "logs" / name).write_text("x\n")
    with pytest.raises(CollectError, match=re.escape("not logs/<namespace>/<name>.log")):
        collect(CollectOptions(TRAINER, tmp_path / "results", ROOT, from_dir=folder))
    assert not (tmp_path / "results").exists()


def test_the_archive_itself_refuses_paths_outside_the_run() -> None:
    texts = {"summary.json": "{}"}
    with pytest.raises(ValueError, match="not a path inside"):
        build_archive("undated-000000000000", [], texts, {"logs/../../x.log": b""})
    with pytest.raises(ValueError, match="not a path inside"):
        build_archive("../run", [], texts)
    with pytest.raises(ValueError, match="is not a Kubernetes"):
        object_path({"kind": "ConfigMap", "metadata": {"name": "..", "namespace": "x"}})


@settings(max_examples=300, deadline=None)
@given(
    kind=st.text(max_size=12),
    namespace=st.text(alphabet="a-z./\\0\x00", max_size=10),
    name=st.text(alphabet="ab-./\\%\x00Z", max_size=12),
)
def test_any_name_accepted_is_one_plain_file_inside_the_objects_folder(
    kind: str, namespace: str, name: str
) -> None:
    """Property: whatever the names, an accepted identity is exactly 4 plain path parts."""
    obj = {"kind": kind, "metadata": {"name": name, "namespace": namespace}}
    if name_problem(kind, namespace, name) is not None:
        with pytest.raises(ValueError):
            object_path(obj)
        return
    parts = object_path(obj).split("/")
    assert len(parts) == 4 and parts[0] == "objects"
    assert all(p not in {"", ".", ".."} and "\\" not in p and "\0" not in p for p in parts)


def test_an_alias_bomb_in_an_export_fails_fast_in_bounded_memory(tmp_path: Path) -> None:
    """Item 9: 400-odd bytes that would expand to 9^9 strings are refused at once."""
    folder = write_export(tmp_path / "export", lab_state())
    (folder / "bomb.yaml").write_text(BOMB)
    assert len(BOMB) < 500
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(
            CollectError, match=re.escape("bomb.yaml: cannot be read: found an alias")
        ):
            collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT, from_dir=folder))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < HANG  # a hang guard, not a speed target
    assert peak < 64 * 1024 * 1024
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_a_retry_after_of_nan_is_ignored_not_an_internal_error(tmp_path: Path) -> None:
    """Item 11: `Retry-After: nan` made time.sleep raise; now the backoff applies."""
    with serve(lab_state()) as fake:
        fake.faults.append(Fault("workflows", 429, retry_after="nan"))
        config = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
        args = ["collect", "--site", str(SITE_FILE), "--context", "lab", "--kubeconfig"]
        done = CliRunner().invoke(main, [*args, str(config), "--out", str(tmp_path / "r")])
    assert done.exit_code == 0, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
