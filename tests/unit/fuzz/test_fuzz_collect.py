"""Fuzz what `collect --from` reads: exported YAML and JSON, and trainer-mode pod logs.

An export is read into objects or refused with a `SourceError` naming the file; a pod
log becomes a run's record (perhaps `no-data`) with a verdict. Any other exception is
an internal error (exit 70).
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path

from fuzzing import BUDGET, lines_of, mixed
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_ingest import DCGM_FRAGMENTS, NCCL_FRAGMENTS
from trainerfactory import example_manifests

from nvcregen.collect.collector import load_site_file
from nvcregen.collect.model import LoadedSite
from nvcregen.collect.source import SourceError, read_folder
from nvcregen.results.liveobjects import Obj
from nvcregen.results.logruns import RunLog, assemble_log_runs
from nvcregen.results.verdicts import judge

ROOT = Path(__file__).resolve().parents[3]
TRAINER_SITE = str(ROOT / "tests" / "fixtures" / "perrun" / "h20-3e-trainer.yaml")
EXPORT_FRAGMENTS = (
    "apiVersion: v1\n",
    "kind: ConfigMap\n",
    "kind: List\nitems:\n- ",
    "metadata:\n  name: a\n",
    "metadata: {name: b, namespace: nvcre}\n",
    "  labels: {nvcregen.io/site: lab}\n",
    "---\n",
    "a: &x 1\nb: *x\n",
    "!!binary aGk=",
    "key: 1\nkey: 2\n",
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}',
    '{"kind": "WorkflowList", "items": [',
    ": ",
    "- ",
    "\n  ",
)


@BUDGET
@given(
    st.sampled_from([".yaml", ".json"]),
    st.one_of(lines_of(EXPORT_FRAGMENTS), mixed(EXPORT_FRAGMENTS)),
)
def test_fuzz_export_reader(suffix: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / f"export{suffix}").write_text(text, encoding="utf-8", errors="replace")
        try:
            snapshot = read_folder(Path(folder))
        except SourceError as exc:
            assert exc.problems and all(p.startswith(("export", folder)) for p in exc.problems)
        else:
            assert all(isinstance(obj, dict) for obj in snapshot.objects)


@cache
def trainer_site() -> tuple[LoadedSite, dict[str, list[Obj]]]:
    """The example trainer site and its rendered runs, by kind (TrainJob: NCCL, Job: DCGM)."""
    runs: dict[str, list[Obj]] = {}
    for manifest in example_manifests():
        runs.setdefault(manifest.kind, []).append(manifest.obj)
    return load_site_file(ROOT, TRAINER_SITE), runs


@BUDGET
@given(st.one_of(lines_of(NCCL_FRAGMENTS), lines_of(DCGM_FRAGMENTS)), st.booleans())
def test_fuzz_trainer_log_reader(text: str, dcgm: bool) -> None:
    loaded, runs = trainer_site()
    run = runs["Job" if dcgm else "TrainJob"][0]
    meta = run["metadata"]
    log = RunLog(meta["namespace"], meta["name"], text.encode("utf-8", "replace"))
    site = loaded.plan.site
    rounds = site.spec.readiness.rounds
    results = assemble_log_runs(site.metadata.name, loaded.plan.units, rounds, [log], [run])
    verdicts = judge(site, results.runs)
    json.dumps(verdicts.model_dump(mode="json"), allow_nan=False)  # archivable as JSON
    assert [record.path for record in results.records] == [log.path]  # placed and read


PACK_FRAGMENTS = (
    "@@nvcregen-pack begin test=dcgm-l1 node=node-a pod=p-0-abcde start=2026-12-03T10:00:00Z\n",
    "@@nvcregen-pack begin test=dcgm-l2 node=node-a pod=p-0-abcde start=2026-12-03T10:05:00Z\n",
    "@@nvcregen-pack begin test=dcgm-l2 node=node-b pod=p-1-fghij start=2026-12-03T10:05:00Z\n",
    "@@nvcregen-pack begin test=nccl-all-reduce start=2026-12-03T10:00:00Z\n",
    "@@nvcregen-pack end test=dcgm-l1 rc=0\n",
    "@@nvcregen-pack end test=dcgm-l2 rc=1\n",
    "@@nvcregen-pack end test=dcgm-l3 rc=999\n",
    "@@nvcregen-pack begin test=",
    "2026-10-14T13:00:07.123456789Z ",
    "@@nvcregen-dcgm begin node=node-a pod=p-0-abcde start=2026-12-03T10:00:00Z\n",
)


@cache
def packed_site() -> tuple[LoadedSite, list[Obj]]:
    """The example trainer site packed, and its rendered node pack Jobs."""
    from packfactory import packed
    from trainerfactory import compiled, example_text

    text = packed(example_text())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "h20-3e-trainer.yaml"
        path.write_text(text, encoding="utf-8")
        loaded = load_site_file(Path(folder), str(path))
    jobs = [m.obj for m in compiled(text) if m.kind == "Job"]
    return loaded, jobs


@BUDGET
@given(st.one_of(lines_of(PACK_FRAGMENTS + DCGM_FRAGMENTS), mixed(PACK_FRAGMENTS)))
def test_fuzz_packed_log_reader(text: str) -> None:
    """A node pack's pod log of any content: placed, split, judged; never an exception."""
    loaded, jobs = packed_site()
    meta = jobs[0]["metadata"]
    log = RunLog(meta["namespace"], f"{meta['name']}-0-abcde", text.encode("utf-8", "replace"))
    site = loaded.plan.site
    results = assemble_log_runs(
        site.metadata.name, loaded.plan.units, site.spec.readiness.rounds, [log], jobs, "packed"
    )
    verdicts = judge(site, results.runs)
    json.dumps(verdicts.model_dump(mode="json"), allow_nan=False)
    assert {record.path for record in results.records} <= {log.path}
    assert all(r.test in ("dcgm-l1", "dcgm-l2") for r in results.records)
