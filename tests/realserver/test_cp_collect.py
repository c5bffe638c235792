"""`nvcregen collect --context` and `--reclaim` against a real kube-apiserver.

The `lab` site's results (tests/unit/collect/labstate.py) are created on the server in a
namespace of each test's own (labload.py). The server assigns uids, resourceVersions and
continue tokens, enforces the DELETE preconditions `--reclaim` sends, and, with
kube-controller-manager's garbage collector, deletes what the reclaimed objects own.
Faults go through tests/faultproxy.py, a proxy in front of the real server.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import labload
import pytest
from click.testing import CliRunner
from fakelist import serve, write_kubeconfig
from faultproxy import Fault, Proxy, proxy
from kubecontrolplane import CONTEXT, ControlPlane, object_path

from nvcregen.cli import main
from nvcregen.cluster.retry import RetryPolicy
from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectError, CollectOptions, CollectOutcome
from nvcregen.results.archive import archived_objects, verify_archive

ROOT = Path(__file__).resolve().parents[2]
FAST = RetryPolicy(attempts=3, backoff=0.0, max_backoff=0.0, timeout=(5.0, 2.0), restarts=1)
Obj = dict[str, Any]
_numbers = itertools.count(1)


def fresh_namespace() -> str:
    return f"lab-{next(_numbers)}"


def run(
    tmp: Path, site: Path, kubeconfig: Path, *, reclaim: bool = False, page_size: int = 4
) -> CollectOutcome:
    options = CollectOptions(
        str(site),
        tmp / "results",
        ROOT,
        CONTEXT,
        kubeconfig,
        reclaim=reclaim,
        policy=FAST,
        page_size=page_size,
        sleep=lambda _: None,
    )
    return collect(options)


@pytest.fixture
def lab(control_plane: ControlPlane, tmp_path: Path) -> tuple[Path, list[Obj]]:
    """The lab state in a namespace of this test's own; the site file that reads it."""
    namespace = fresh_namespace()
    stored = labload.load(control_plane, namespace)
    return labload.site_file(tmp_path, namespace), stored


@pytest.fixture
def through(control_plane: ControlPlane, tmp_path: Path) -> Iterator[tuple[Proxy, Path]]:
    """A fault proxy in front of the server, and a kubeconfig that talks to it."""
    with proxy(control_plane) as faults:
        config = control_plane.write_kubeconfig(tmp_path / "proxied", url=faults.url)
        yield faults, config
        assert faults.errors == [], "a step the proxy ran for the test failed"


def exists(plane: ControlPlane, obj: Obj) -> bool:
    code, _ = plane.request("GET", object_path(obj))
    return code == 200


def still_there(plane: ControlPlane, objs: list[Obj], within: float = 60.0) -> list[str]:
    """The objects left after the garbage collector had `within` seconds to finish deletes.

    Reclaim deletes with `propagationPolicy: Orphan`: the server marks the object and the
    garbage collector removes its `orphan` finalizer, and the object, a moment later.
    """
    deadline = time.monotonic() + within
    left = [o for o in objs if exists(plane, o)]
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = [o for o in left if exists(plane, o)]
    return [key(o) for o in left]


def words(outcome: CollectOutcome) -> list[tuple[str, str, str]]:
    return [(v.stage, v.test, str(v.word)) for v in outcome.verdicts.runs]


def test_collect_reads_the_real_server_as_it_reads_the_stand_in(
    control_plane: ControlPlane, lab: tuple[Path, list[Obj]], tmp_path: Path
) -> None:
    site, stored = lab
    outcome = run(tmp_path / "real", site, control_plane.kubeconfig, page_size=3)
    assert outcome.archive.verified, outcome.archive.problems
    assert verify_archive(outcome.archive.path) == []
    with serve(labload.lab_state()) as fake:
        config = write_kubeconfig(tmp_path / "fake-kubeconfig", fake.url)
        options = CollectOptions(
            str(labload.SITE_FILE), tmp_path / "fake", ROOT, "lab", config, policy=FAST
        )
        expected = collect(options)
    assert words(outcome) == words(expected)
    assert str(outcome.verdicts.word) == str(expected.verdicts.word)
    assert outcome.verdicts.counts() == expected.verdicts.counts()
    assert [str(v.word) for v in outcome.verdicts.thresholds] == [
        str(v.word) for v in expected.verdicts.thresholds
    ]
    # Nothing deleted without --reclaim.
    assert all(exists(control_plane, obj) for obj in stored)


def test_reclaim_deletes_the_sites_owners_and_the_garbage_collector_the_rest(
    control_plane: ControlPlane, lab: tuple[Path, list[Obj]], tmp_path: Path
) -> None:
    control_plane.controllers()
    site, stored = lab
    outcome = run(tmp_path, site, control_plane.kubeconfig, reclaim=True)
    assert outcome.reclaim_problems == ()
    assert {o.status for o in outcome.deleted} == {"deleted"}
    deleted = {f"{o.request.kind}/{o.request.name}" for o in outcome.deleted}
    owners = sorted(
        f"{o['kind']}/{o['metadata']['name']}"
        for o in stored
        if o["kind"] in {"Certification", "WorkloadRun"}
        and o["metadata"]["labels"].get("nvcregen.io/site") == "lab"
    )
    # The site's owners, each by its own DELETE (and, once #20's fix is in, what they
    # own, each pinned to its archived version; the garbage collector takes the rest).
    assert len(owners) == 4
    assert set(owners) <= deleted
    owned = owned_closure(stored, {o["metadata"]["uid"] for o in stored if key(o) in owners})
    kept = [o for o in stored if o not in owned]
    assert len(owned) > len(owners)  # Workflows, measurements, node results, snapshots
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and any(exists(control_plane, o) for o in owned):
        time.sleep(0.5)
    assert [key(o) for o in owned if exists(control_plane, o)] == []
    assert [key(o) for o in kept if not exists(control_plane, o)] == [], "only the site's go"
    assert any("other-site" in o["metadata"]["name"] for o in kept)
    # Everything deleted, by a DELETE or by the garbage collector, is in the archive.
    archived = {o["metadata"]["uid"] for o in archived_objects(outcome.archive.path)}
    assert [key(o) for o in owned if o["metadata"]["uid"] not in archived] == []
    assert deleted <= {key(o) for o in owned}


def key(obj: Obj) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def owned_closure(objects: list[Obj], roots: set[str]) -> list[Obj]:
    """Every object whose owner chain reaches an object of uid in `roots`."""
    gone, changed = set(roots), True
    while changed:
        changed = False
        for obj in objects:
            meta = obj["metadata"]
            owners = {ref["uid"] for ref in meta.get("ownerReferences") or []}
            if meta["uid"] not in gone and owners & gone:
                gone.add(meta["uid"])
                changed = True
    return [o for o in objects if o["metadata"]["uid"] in gone]


def test_a_child_changed_between_list_and_delete_is_not_deleted(
    control_plane: ControlPlane,
    lab: tuple[Path, list[Obj]],
    tmp_path: Path,
    through: tuple[Proxy, Path],
) -> None:
    """Reclaim deletes only what the archive holds, children included (#20, item 5)."""
    control_plane.controllers()
    site, stored = lab
    owners = {o["metadata"]["uid"] for o in stored if o["kind"] in {"Certification"}}
    children = [o for o in owned_closure(stored, owners) if o["kind"] == "BandwidthMeasurement"]
    child = children[0]

    def touch() -> None:  # a controller writes to it after collect read it
        patch = {"metadata": {"labels": {"touched": "yes"}}}
        path = object_path(child)
        control_plane.ok("PATCH", path, patch, content_type="application/merge-patch+json")

    faults, config = through
    faults.faults.append(Fault("*", "DELETE", before=touch))  # before the first DELETE
    outcome = run(tmp_path, site, config, reclaim=True)
    assert faults.deletes(), "reclaim deleted something"
    archived = {o["metadata"]["uid"] for o in archived_objects(outcome.archive.path)}
    assert child["metadata"]["uid"] in archived  # in the version before the change
    others = [o for o in children[1:] if o["metadata"]["uid"] in archived]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and any(exists(control_plane, o) for o in others):
        time.sleep(0.5)
    time.sleep(2.0)  # the garbage collector has caught up with the unchanged ones
    assert exists(control_plane, child), "a version the archive does not hold was deleted"


def certification(stored: list[Obj]) -> Obj:
    return next(o for o in stored if o["kind"] == "Certification")


def test_an_object_changed_between_list_and_delete_is_kept(
    control_plane: ControlPlane,
    lab: tuple[Path, list[Obj]],
    tmp_path: Path,
    through: tuple[Proxy, Path],
) -> None:
    """The resourceVersion precondition: the server refuses (409), nothing is lost."""
    site, stored = lab
    target = certification(stored)
    path = object_path(target)

    def touch() -> None:  # someone relabels it after collect read it
        patch = {"metadata": {"labels": {"touched": "yes"}}}
        control_plane.ok("PATCH", path, patch, content_type="application/merge-patch+json")

    faults, config = through
    faults.faults.append(Fault("certifications", "DELETE", before=touch))
    outcome = run(tmp_path, site, config, reclaim=True)
    statuses = {f"{o.request.kind}/{o.request.name}": o.status for o in outcome.deleted}
    assert statuses[key(target)] == "conflict"
    assert exists(control_plane, target)
    _, live = control_plane.request("GET", path)
    assert live["metadata"]["labels"]["touched"] == "yes"
    name = f"Certification {target['metadata']['namespace']}/{target['metadata']['name']}"
    [problem] = [p for p in outcome.reclaim_problems if p.startswith(name)]
    archived = target["metadata"]["resourceVersion"]
    assert problem.startswith(f"{name} was not deleted: conflict (HTTP 409: ")
    assert f"the ResourceVersion in the precondition ({archived}) does not match" in problem


def test_an_object_recreated_between_list_and_delete_is_kept(
    control_plane: ControlPlane,
    lab: tuple[Path, list[Obj]],
    tmp_path: Path,
    through: tuple[Proxy, Path],
) -> None:
    """The uid precondition: a new object under the archived name is not the archived one."""
    site, stored = lab
    target = certification(stored)
    path = object_path(target)
    holder: dict[str, str] = {}

    def recreate() -> None:
        control_plane.ok("DELETE", path, {"propagationPolicy": "Background"})
        while exists(control_plane, target):  # no finalizer: gone at once, or nearly
            time.sleep(0.1)
        again = {k: v for k, v in target.items() if k != "status"}
        again["metadata"] = {
            k: v for k, v in target["metadata"].items() if k not in labload.SERVER_SET
        }
        holder["uid"] = control_plane.create(again)["metadata"]["uid"]

    faults, config = through
    faults.faults.append(Fault("certifications", "DELETE", before=recreate))
    outcome = run(tmp_path, site, config, reclaim=True)
    statuses = {f"{o.request.kind}/{o.request.name}": o.status for o in outcome.deleted}
    assert statuses[key(target)] == "conflict"
    _, live = control_plane.request("GET", path)
    assert live["metadata"]["uid"] == holder["uid"] != target["metadata"]["uid"]
    [problem] = [p for p in outcome.reclaim_problems if target["metadata"]["name"] in p]
    assert f"the UID in the precondition ({target['metadata']['uid']}) does not match" in problem


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (Fault("bandwidthmeasurements", code=500, times=9), "HTTP 500"),
        (Fault("workflows", delay=3.0, times=9), "no answer"),
        (
            Fault("bandwidthmeasurements", drop=1, keep_remaining=True),
            "sent no continue token",
        ),
        (
            Fault("bandwidthmeasurements", drop=1, on_continue=True),
            "items arrived of the 13 announced",
        ),
    ],
    ids=["500s", "timeouts", "cut-announcing-more", "cut-after-the-first-page"],
)
def test_a_read_that_cannot_complete_archives_and_deletes_nothing(
    lab: tuple[Path, list[Obj]],
    tmp_path: Path,
    through: tuple[Proxy, Path],
    fault: Fault,
    message: str,
) -> None:
    site, _ = lab
    faults, config = through
    faults.faults.append(fault)
    with pytest.raises(CollectError, match="could not read the cluster completely") as raised:
        run(tmp_path, site, config, reclaim=True, page_size=4)
    assert message in str(raised.value)
    assert not (tmp_path / "results").exists()
    assert faults.deletes() == []


def test_a_silently_short_list_is_archived_but_never_reclaimed(
    control_plane: ControlPlane,
    lab: tuple[Path, list[Obj]],
    tmp_path: Path,
    through: tuple[Proxy, Path],
) -> None:
    """One page, no continue token, no count, an item left out: nothing in the answer
    shows it, only what the other objects name."""
    site, stored = lab
    faults, config = through
    faults.faults.append(Fault("bandwidthmeasurements", drop=2))
    outcome = run(tmp_path, site, config, reclaim=True, page_size=500)
    assert outcome.archive.verified
    assert faults.deletes() == []
    [problem] = outcome.reclaim_problems
    assert problem.startswith("nothing deleted: ")
    assert all(exists(control_plane, o) for o in stored)


@pytest.mark.parametrize(
    "fault",
    [
        Fault("bandwidthmeasurements", code=500, times=2),
        Fault("workloadruns", code=429, times=1),
        Fault("workflows", delay=3.0, times=1),
    ],
    ids=["two-500s", "429", "one-timeout"],
)
def test_a_fault_that_clears_within_the_retries_reads_everything(
    control_plane: ControlPlane,
    lab: tuple[Path, list[Obj]],
    tmp_path: Path,
    through: tuple[Proxy, Path],
    fault: Fault,
) -> None:
    site, _ = lab
    faults, config = through
    faults.faults.append(fault)
    outcome = run(tmp_path / "faulty", site, config)
    clean = run(tmp_path / "clean", site, control_plane.kubeconfig)
    assert fault.times == 0, "the fault was injected"
    assert outcome.archive.verified
    assert outcome.archive.path.name == clean.archive.path.name  # the same run, same bytes


def test_the_command_line_collects_from_the_context_and_reclaims(
    control_plane: ControlPlane, lab: tuple[Path, list[Obj]], tmp_path: Path
) -> None:
    control_plane.controllers()  # reclaim orphans children: the garbage collector finishes it
    site, stored = lab
    out = tmp_path / "results"
    args = ["collect", "--site", str(site), "--context", CONTEXT]
    args += ["--kubeconfig", str(control_plane.kubeconfig), "--out", str(out), "--reclaim"]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"{out.as_posix()}/lab/") and first.endswith(": written, verified")
    assert done.stderr.endswith("nvcregen: collect lab: pass (10 pass, 0 incomplete, 0 fail)\n")
    owners = [o for o in stored if o["kind"] in {"Certification", "WorkloadRun"}]
    site_owners = [o for o in owners if o["metadata"]["labels"].get("nvcregen.io/site") == "lab"]
    assert still_there(control_plane, site_owners) == []
    assert all(exists(control_plane, o) for o in owners if o not in site_owners)
