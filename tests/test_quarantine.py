"""`nvcregen quarantine` (issue #22): a verified run's failed nodes labelled and tainted.

Archives come from saved logs of the four-node on-call site (`oncallfactory.py`); the
cluster is `nodeapi.FakeNodes`, which models server-side apply's field ownership.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from kubehttp import serve_app
from nodeapi import FakeNodes
from oncallfactory import NODES, healthy, site_text, write_logs

from nvcregen.cli import main
from nvcregen.cluster.client import connect, send
from nvcregen.quarantine.apply import apply_marks
from nvcregen.quarantine.marks import KEY, REASON, RUN, TESTS, Mark, Marks, marks_of
from nvcregen.quarantine.patch import as_patch, node_patches
from nvcregen.report.archive import read_archive
from nvcregen.report.folder import ReportError
from nvcregen.report.judgedsite import judged_site

SITE = "h20-3e-four"
OTHER_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def alone_slow(*bad: str, busbw_gbs: float = 310.0) -> Any:
    """Each node in `bad` fails its own single-node all-reduce; (a, b) fails as a pair."""

    def busbw(stage: str, test: str, nodes: tuple[str, ...]) -> float:
        if stage == "single-node" and test == "nccl-all-reduce" and nodes[0] in bad:
            return busbw_gbs
        if (stage, test) == ("two-node", "nccl-all-reduce") and "node-a" in nodes:
            return 300.0
        return healthy(stage, test, nodes)

    return busbw


def collected(tmp: Path, busbw: Any, model: str = "", on: str = "") -> Path:
    """Collect saved logs of the four-node site; `model` replaces the logs' device names
    (of the logs whose devices include node `on`, when given)."""
    site = tmp / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    write_logs(tmp / "saved", site_text(), busbw)
    for log in (tmp / "saved" / "logs").rglob("*.log") if model else ():
        text = log.read_text(encoding="utf-8")
        if "# Using devices" in text and (not on or f" on {on:>10s} device" in text):
            log.write_text(text.replace("NVIDIA H20-3e", model), encoding="utf-8")
    args = ["collect", "--site", str(site), "--from", str(tmp / "saved"), "--out", str(tmp / "r")]
    assert CliRunner().invoke(main, args).exit_code == 1
    (run,) = (tmp / "r" / SITE).iterdir()
    return run


@pytest.fixture(scope="module")
def one_failed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """node-a failed alone; node-b suspect (its pair with node-a failed); c, d cleared."""
    return collected(tmp_path_factory.mktemp("one"), alone_slow("node-a"))


@pytest.fixture(scope="module")
def two_failed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """node-a and node-c failed alone."""
    return collected(tmp_path_factory.mktemp("two"), alone_slow("node-a", "node-c"))


def collected_after(run_dir: Path, busbw: Any) -> Path:
    """Collect the site's logs again (measured with `busbw`) into `run_dir`'s site folder:
    a newer run (an undated run is ordered by when it was collected)."""
    tmp = run_dir.parent.parent.parent
    before = {p.name for p in run_dir.parent.iterdir()}
    saved = tmp / f"saved-{len(before)}"
    write_logs(saved, site_text(), busbw)
    site = tmp / "site.yaml"
    args = ["collect", "--site", str(site), "--from", str(saved), "--out", str(tmp / "r")]
    CliRunner().invoke(main, args)
    (newer,) = [p for p in run_dir.parent.iterdir() if p.name not in before]
    return newer


@pytest.fixture(scope="module")
def retested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """one_failed's run, and a newer run of its site that clears every node."""
    run_dir = collected(tmp_path_factory.mktemp("retested"), alone_slow("node-a"))
    collected_after(run_dir, healthy)
    return run_dir


@pytest.fixture
def fake() -> Iterator[FakeNodes]:
    nodes = FakeNodes()
    for name in ("node-a", "node-b", "node-c", "node-d"):
        nodes.add(name, {"pool": "h20"}, [OTHER_TAINT] if name == "node-a" else [])
    with serve_app(nodes) as url:
        nodes.url = url  # type: ignore[attr-defined]
        yield nodes


def kubeconfig(tmp: Path, url: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "lab",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "users": [{"name": "ops", "user": {"token": "t0ken"}}],
        "contexts": [{"name": "lab", "context": {"cluster": "fake", "user": "ops"}}],
    }
    path = tmp / "kubeconfig"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def site_of(run_dir: Path) -> str:
    """The site file `collected` judged the run against (`<tmp>/r/<site>/<run>`)."""
    return str(run_dir.parent.parent.parent / "site.yaml")


def run(run_dir: Path, tmp: Path, fake: FakeNodes, *extra: str) -> Any:
    config = kubeconfig(tmp, fake.url)  # type: ignore[attr-defined]
    args = ["quarantine", str(run_dir), "--context", "lab", "--kubeconfig", str(config)]
    return CliRunner().invoke(main, [*args, "--site", site_of(run_dir), *extra])


def dry(run_dir: Path, *extra: str) -> Any:
    """A dry run (no cluster) of `quarantine`."""
    return CliRunner().invoke(
        main, ["quarantine", str(run_dir), "--site", site_of(run_dir), *extra]
    )


@pytest.mark.slow
def test_dry_run_names_only_failed_nodes_and_writes_nothing(one_failed: Path) -> None:
    result = dry(one_failed, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mode"] == "dry-run"
    assert [n["node"] for n in data["nodes"]] == ["node-a"]
    (node,) = data["nodes"]
    assert node["taint"] == {"key": KEY, "value": SITE, "effect": "NoSchedule"}
    assert node["labels"] == {KEY: SITE}
    assert node["annotations"][RUN] == f"{SITE}/{one_failed.name}"
    assert data["notQuarantined"] == [{"node": "node-b", "status": "suspect"}]
    text = dry(one_failed)
    assert "dry run" in text.output and "node-b (suspect)" in text.output


def test_apply_without_context_is_refused(one_failed: Path) -> None:
    result = CliRunner().invoke(main, ["quarantine", str(one_failed), "--apply"])
    assert result.exit_code == 2
    assert "needs --context" in result.output


def test_apply_sets_the_mark_keeps_every_other_taint_and_touches_no_other_node(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    before = {n: json.dumps(v, sort_keys=True) for n, v in fake.nodes.items()}
    result = run(one_failed, tmp_path, fake, "--apply")
    assert result.exit_code == 0, result.output
    assert "node-a: set" in result.output
    node = fake.nodes["node-a"]
    assert node["spec"]["taints"] == [
        OTHER_TAINT,
        {"key": KEY, "value": SITE, "effect": "NoSchedule"},
    ]
    assert node["metadata"]["labels"] == {"pool": "h20", KEY: SITE}
    assert node["metadata"]["annotations"][RUN] == f"{SITE}/{one_failed.name}"
    assert fake.owners["node-a", ("labels", KEY)] == {"nvcregen"}
    assert fake.owners["node-a", ("labels", "pool")] == {"kubelet"}
    for name in ("node-b", "node-c", "node-d"):
        assert json.dumps(fake.nodes[name], sort_keys=True) == before[name]
    patches = [r for r in fake.seen if r.method == "PATCH"]
    assert [r.path for r in patches] == ["/api/v1/nodes/node-a"]
    assert patches[0].query["fieldManager"] == ["nvcregen"]
    assert patches[0].body["metadata"]["resourceVersion"] == "101"  # as read


def test_a_second_apply_writes_nothing(one_failed: Path, tmp_path: Path, fake: FakeNodes) -> None:
    assert run(one_failed, tmp_path, fake, "--apply").exit_code == 0
    fake.seen.clear()
    again = run(one_failed, tmp_path, fake, "--apply")
    assert again.exit_code == 0
    assert "node-a: already set" in again.output
    assert [r.method for r in fake.seen] == ["GET"]


@pytest.mark.slow
def test_release_takes_off_exactly_what_it_set(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    before = json.loads(json.dumps(fake.nodes["node-a"]))
    assert run(retested, tmp_path, fake, "--apply").exit_code == 0
    released = run(retested, tmp_path, fake, "--apply", "--release")
    assert released.exit_code == 0, released.output
    assert "node-a: released" in released.output
    after = fake.nodes["node-a"]
    assert after["spec"]["taints"] == [OTHER_TAINT]
    assert after["metadata"]["labels"] == before["metadata"]["labels"]
    assert after["metadata"]["annotations"] == before["metadata"]["annotations"]


def test_release_after_another_controller_took_the_taint_list(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """The node controller rewrote the list (it owns it now): the taint still comes off."""
    fake.update("node-a", "kubelet", taints=[])
    assert run(retested, tmp_path, fake, "--apply").exit_code == 0
    ours = fake.nodes["node-a"]["spec"]["taints"]
    fake.update("node-a", "node-controller", taints=ours)
    assert fake.owners["node-a", ("taints",)] == {"node-controller"}
    assert run(retested, tmp_path, fake, "--apply", "--release").exit_code == 0
    assert "taints" not in fake.nodes["node-a"]["spec"]


def test_release_leaves_a_node_another_run_quarantined(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    assert run(retested, tmp_path, fake, "--apply").exit_code == 0
    fake.nodes["node-a"]["metadata"]["annotations"][RUN] = f"{SITE}/another-run"
    kept = json.dumps(fake.nodes["node-a"], sort_keys=True)
    result = run(retested, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 0
    assert f"node-a: other run (quarantined by {SITE}/another-run)" in result.output
    assert json.dumps(fake.nodes["node-a"], sort_keys=True) == kept


def test_a_taint_added_between_read_and_apply_is_kept(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    late = {"key": "late/taint", "effect": "NoSchedule"}

    def race(nodes: FakeNodes) -> None:
        nodes.update("node-a", "kubectl-taint", taints=[OTHER_TAINT, late])

    fake.race = race
    result = run(one_failed, tmp_path, fake, "--apply")
    assert result.exit_code == 0, result.output
    assert [r.method for r in fake.seen] == ["GET", "PATCH", "GET", "PATCH"]
    assert late in fake.nodes["node-a"]["spec"]["taints"]
    assert fake.nodes["node-a"]["metadata"]["labels"][KEY] == SITE


@pytest.mark.slow
def test_an_api_failing_half_way_stops_and_a_rerun_finishes(
    two_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    fake.fail_after = 1  # node-a's apply lands; everything after answers 500
    slept: list[float] = []
    config = kubeconfig(tmp_path, fake.url)  # type: ignore[attr-defined]
    cluster = connect("lab", config, sleep=slept.append)
    archive = read_archive(two_failed)
    marks = marks_of(archive, judged_site(archive, Path(site_of(two_failed))))
    assert [m.node for m in marks.marks] == ["node-a", "node-c"]
    outcomes = apply_marks(cluster, marks, release=False)
    assert [(o.node, o.action) for o in outcomes] == [("node-a", "set"), ("node-c", "failed")]
    assert "HTTP 500" in outcomes[1].detail and "etcdserver" in outcomes[1].detail
    assert len(slept) == 3  # four tries of node-c's read
    assert KEY not in fake.nodes["node-c"]["metadata"]["labels"]
    fake.fail_after = None
    again = apply_marks(cluster, marks, release=False)
    assert [(o.node, o.action) for o in again] == [("node-a", "already set"), ("node-c", "set")]


def test_a_failed_node_missing_from_the_cluster_exits_1(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    del fake.nodes["node-a"]
    result = run(one_failed, tmp_path, fake, "--apply")
    assert result.exit_code == 1
    assert "node-a: missing" in result.output


def forged(
    run_dir: Path,
    tmp: Path,
    *names: str,
    status: str = "failed",
    edit: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """A copy of the run whose verdicts add `names` as failed (or `status`) nodes (and
    `edit` changes), SHA256SUMS rewritten to match (an archive from before issue #31,
    or edited by hand)."""
    copy = tmp / "r" / SITE / run_dir.name
    shutil.copytree(run_dir, copy)
    verdicts = json.loads((copy / "verdicts.json").read_text(encoding="utf-8"))
    reason = ["failed alone in single-node / nccl-all-reduce: HardwareFailureDetected"]
    verdicts["nodes"] += [
        {"node": n, "status": status, "word": "fail", "reasons": reason} for n in names
    ]
    if edit is not None:
        edit(verdicts)
    (copy / "verdicts.json").write_text(json.dumps(verdicts), encoding="utf-8")
    names_listed = [
        line.split("  ", 1)[1] for line in (copy / "SHA256SUMS").read_text().splitlines()
    ]
    sums = [f"{hashlib.sha256((copy / n).read_bytes()).hexdigest()}  {n}" for n in names_listed]
    (copy / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")
    shutil.copy(site_of(run_dir), site_of(copy))
    return copy


HOSTILE = ("prod-control-plane-1", "node-a/status", "../../api/v1/namespaces/kube-system")


def test_names_outside_the_plan_are_refused_before_any_request(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """Issue #31: a verdict naming a node no pool names is never a path, nor a PATCH."""
    fake.add("prod-control-plane-1", {"node-role.kubernetes.io/control-plane": ""}, [])
    before = json.dumps(fake.nodes["prod-control-plane-1"], sort_keys=True)
    run_dir = forged(one_failed, tmp_path, *HOSTILE)
    result = run(run_dir, tmp_path, fake, "--apply")
    assert result.exit_code == 1, result.output
    assert "node-a: set" in result.output
    assert "refused, nothing sent for 3 node(s):" in result.output
    assert (
        "prod-control-plane-1 (failed): prod-control-plane-1 is not a node the site's pools name"
    ) in result.output
    assert "'node-a/status' is not a node name (an RFC 1123 subdomain)" in result.output
    assert "'../../api/v1/namespaces/kube-system' is not a node name" in result.output
    assert [(r.method, r.path) for r in fake.seen] == [
        ("GET", "/api/v1/nodes/node-a"),
        ("PATCH", "/api/v1/nodes/node-a"),
    ]
    assert json.dumps(fake.nodes["prod-control-plane-1"], sort_keys=True) == before
    data = json.loads(dry(run_dir, "--format", "json").output)
    assert [n["node"] for n in data["nodes"]] == ["node-a"]
    assert [r["node"] for r in data["refused"]] == list(HOSTILE)
    assert dry(run_dir).exit_code == 1  # a dry run says so too


@pytest.mark.slow
def test_release_refuses_names_outside_the_plan_too(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    run_dir = forged(one_failed, tmp_path, "prod-control-plane-1")
    collected_after(run_dir, healthy)  # node-a's evidence: prod-control-plane-1 has none
    result = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 1
    assert "prod-control-plane-1 (failed)" in result.output
    assert {r.path for r in fake.seen} == {"/api/v1/nodes/node-a"}


def test_apply_marks_refuses_a_mark_that_is_no_node_name_without_a_request(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """The last guard: a caller handing apply_marks a bad name sends nothing for it."""
    cluster = connect("lab", kubeconfig(tmp_path, fake.url))  # type: ignore[attr-defined]
    good = Mark("node-b", SITE, f"{SITE}/r", "why")
    bad = Mark("../../api/v1/namespaces/kube-system", SITE, f"{SITE}/r", "why")
    outcomes = apply_marks(cluster, Marks(SITE, f"{SITE}/r", (bad, good), ()), release=False)
    assert [(o.node, o.action) for o in outcomes] == [
        ("../../api/v1/namespaces/kube-system", "refused"),
        ("node-b", "set"),
    ]
    assert {r.path for r in fake.seen} == {"/api/v1/nodes/node-b"}


def test_the_site_must_be_the_one_the_run_was_judged_against(
    one_failed: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(Path(site_of(one_failed)).read_text() + "# changed\n", encoding="utf-8")
    args = ["quarantine", str(one_failed), "--site", str(other)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "is not the site the run was judged against" in result.output
    missing = CliRunner().invoke(main, ["quarantine", str(one_failed)])  # not under the cwd
    assert missing.exit_code == 2
    assert "cannot be read" in missing.output and "give it with --site" in missing.output


@pytest.fixture(scope="module")
def wrong_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every NCCL log names H100 devices where the pool plans H20-3e: NVC731 on all four."""
    return collected(tmp_path_factory.mktemp("h100"), healthy, model="NVIDIA H100 80GB HBM3")


@pytest.mark.slow
def test_a_pool_failed_whole_on_a_gpu_model_mismatch_is_refused_not_tainted(
    wrong_model: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """Four nodes failed, each only on NVC731: the site (or the logs) is wrong, not them."""
    archive = read_archive(wrong_model)
    assert [n.status for n in archive.verdicts.nodes] == ["failed"] * 4
    assert {f.code for f in archive.verdicts.findings} == {"NVC731"}
    result = run(wrong_model, tmp_path, fake, "--apply")
    assert result.exit_code == 1, result.output
    assert fake.seen == []  # no node read, none written
    lines = result.output.splitlines()
    assert lines[0].endswith("no failed node the site names, nothing to quarantine")
    assert lines[1] == "refused, nothing sent for 4 node(s):"
    assert lines[2].startswith(
        "  node-a (failed), node-b (failed), node-c (failed), node-d (failed): every node of"
        " pool h20 failed only on evidence not bound to the plan (NVC731), likely the site or"
        " the collection rather than 4 faulty node(s) (the first: devices are NVIDIA H100 80GB"
        " HBM3 (8 on node-a), where pool h20 plans H20-3e"
    )


@pytest.mark.slow
def test_one_node_on_another_gpu_model_is_still_quarantined(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, fake: FakeNodes
) -> None:
    """Only node-c's logs name H100s: the pool did not fail whole, node-c is the odd one."""
    run_dir = collected(
        tmp_path_factory.mktemp("odd"), healthy, model="NVIDIA H100 80GB HBM3", on="node-c"
    )
    failed = [n.node for n in read_archive(run_dir).verdicts.nodes if n.status == "failed"]
    assert failed == ["node-c"]
    result = run(run_dir, tmp_path, fake, "--apply")
    assert result.exit_code == 0, result.output
    assert "node-c: set" in result.output and "refused" not in result.output


def test_release_by_one_site_keeps_another_sites_quarantine_taint(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """node-a is quarantined by site `other` too: this site's release takes off its own."""
    cluster = connect("lab", kubeconfig(tmp_path, fake.url))  # type: ignore[attr-defined]
    theirs = Mark("node-a", "other", "other/r1", "failed there")
    (done,) = apply_marks(cluster, Marks("other", "other/r1", (theirs,), ()), release=False)
    assert done.action == "set"
    assert run(retested, tmp_path, fake, "--apply").exit_code == 0
    mine = {"key": KEY, "value": SITE, "effect": "NoSchedule"}
    assert fake.nodes["node-a"]["spec"]["taints"] == [OTHER_TAINT, theirs.taint, mine]
    released = run(retested, tmp_path, fake, "--apply", "--release")
    assert released.exit_code == 0, released.output
    assert "node-a: released" in released.output
    assert fake.nodes["node-a"]["spec"]["taints"] == [OTHER_TAINT, theirs.taint]
    # The label and run annotation hold one value: this site's apply replaced the other's,
    # so the other site's release finds its taint with no run annotation, and takes it off
    (gone,) = apply_marks(cluster, Marks("other", "other/r1", (theirs,), ()), release=True)
    assert gone.action == "released"
    assert fake.nodes["node-a"]["spec"]["taints"] == [OTHER_TAINT]


def hand_marked(fake: FakeNodes) -> None:
    """node-a carries this site's taint and label, set by hand: no run annotation."""
    mine = {"key": KEY, "value": SITE, "effect": "NoSchedule"}
    fake.update("node-a", "kubectl", labels={KEY: SITE}, taints=[OTHER_TAINT, mine])


def test_a_mark_without_a_run_annotation_is_completed_by_apply(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    hand_marked(fake)
    result = run(one_failed, tmp_path, fake, "--apply")
    assert result.exit_code == 0, result.output
    assert "node-a: set" in result.output  # the annotations were missing
    node = fake.nodes["node-a"]
    assert node["spec"]["taints"] == [
        OTHER_TAINT,
        {"key": KEY, "value": SITE, "effect": "NoSchedule"},
    ]
    assert node["metadata"]["annotations"][RUN] == f"{SITE}/{one_failed.name}"
    assert fake.owners["node-a", ("labels", KEY)] == {"kubectl", "nvcregen"}


def test_a_mark_without_a_run_annotation_is_released_as_far_as_nvcregen_owns_it(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """The mark names this site, so release takes it: the taint list (applied whole) goes,
    the label kubectl owns stays, and the release says so (exit 1), never 'released'."""
    hand_marked(fake)
    result = run(retested, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 1, result.output
    assert "node-a: failed (part of the mark stays: another field manager owns it)" in (
        result.output
    )
    node = fake.nodes["node-a"]
    assert node["spec"]["taints"] == [OTHER_TAINT]
    assert node["metadata"]["labels"][KEY] == SITE


def test_a_server_that_keeps_only_the_label_is_not_reported_as_set(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    """The apply answers 200 without the taint: the answer is read, the run fails."""
    fake.drop_taints = True
    result = run(one_failed, tmp_path, fake, "--apply")
    assert result.exit_code == 1, result.output
    assert "node-a: failed (the server's copy lacks the taint after the apply)" in result.output
    assert "node-a: set" not in result.output
    assert fake.nodes["node-a"]["metadata"]["labels"][KEY] == SITE
    assert fake.nodes["node-a"]["spec"]["taints"] == [OTHER_TAINT]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"\xff\xfe", "is not a Site file: 'utf-8' codec can't decode"),
        (b"spec: [unclosed\n", "is not a Site file: while parsing"),
        (b"- a list\n", "is not a Site file"),
    ],
)
def test_a_site_file_that_is_no_site_is_refused(
    one_failed: Path, tmp_path: Path, raw: bytes, said: str
) -> None:
    """Its sha256 matching provenance.json's (as edited here) does not make it a site."""
    archive = read_archive(one_failed)
    site = archive.provenance.site.model_copy(update={"sha256": hashlib.sha256(raw).hexdigest()})
    forged_archive = replace(
        archive, provenance=archive.provenance.model_copy(update={"site": site})
    )
    path = tmp_path / "site.yaml"
    path.write_bytes(raw)
    with pytest.raises(ReportError, match=re.escape(said)):
        judged_site(forged_archive, path)


def test_an_archive_naming_no_site_sha256_is_refused(one_failed: Path, tmp_path: Path) -> None:
    """Found by review: without a sha256 any site file of the project passed for the one
    the run was judged against, and quarantine took its plan from it."""
    archive = read_archive(one_failed)
    site = archive.provenance.site.model_copy(update={"sha256": ""})
    forged = replace(archive, provenance=archive.provenance.model_copy(update={"site": site}))
    with pytest.raises(ReportError, match="names no sha256 of the site"):
        judged_site(forged, Path(site_of(one_failed)))
    assert judged_site(archive, Path(site_of(one_failed)))["spec"]  # with it: the plan


# --format patch (issue 32): the applies printed for kubectl, for review

OURS = {"key": KEY, "value": SITE, "effect": "NoSchedule"}


def patch(run_dir: Path, tmp: Path, nodes: FakeNodes, *extra: str) -> Any:
    return run(run_dir, tmp, nodes, "--format", "patch", *extra)


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def kubectl_apply(tmp: Path, nodes: FakeNodes, text: str, *, force: bool) -> list[int]:
    """What `kubectl apply --server-side --field-manager=nvcregen [--force-conflicts]` sends."""
    cluster = connect("lab", kubeconfig(tmp, nodes.url))  # type: ignore[attr-defined]
    query = [("fieldManager", "nvcregen")] + [("force", "true")] * force
    return [
        send(
            cluster,
            "PATCH",
            f"/api/v1/nodes/{doc['metadata']['name']}",
            query,
            doc,
            content_type="application/apply-patch+yaml",
        ).status
        for doc in documents(text)
    ]


def test_a_patch_per_failed_node_with_its_other_taints_as_read(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    result = patch(one_failed, tmp_path, fake)
    assert result.exit_code == 0, result.output
    (doc,) = documents(result.stdout)
    assert doc == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "node-a",
            "resourceVersion": fake.nodes["node-a"]["metadata"]["resourceVersion"],
            "labels": {KEY: SITE},
            "annotations": {
                RUN: f"{SITE}/{one_failed.name}",
                REASON: doc["metadata"]["annotations"][REASON],
                # failed alone in its own all-reduce, suspect on its pair's (found by review)
                TESTS: "single-node/nccl-all-reduce, two-node/nccl-all-reduce",
            },
        },
        "spec": {"taints": [OTHER_TAINT, OURS]},
    }
    assert doc["metadata"]["annotations"][REASON].startswith("failed alone in single-node")
    assert [r.method for r in fake.seen] == ["GET"]  # read, nothing written
    lines = result.stdout.splitlines()
    assert "#   kubectl apply --server-side --field-manager=nvcregen -f -" in lines
    assert "# node-b (suspect): not quarantined, not proven faulty (retest it first)" in lines


def test_the_patch_applied_as_kubectl_does_leaves_the_node_as_apply_does(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    text = patch(retested, tmp_path, fake).stdout
    # node-a's taints are kubelet's: kubectl reports the conflict the header names
    assert kubectl_apply(tmp_path, fake, text, force=False) == [409]
    assert kubectl_apply(tmp_path, fake, text, force=True) == [200]
    node = fake.nodes["node-a"]
    assert node["spec"]["taints"] == [OTHER_TAINT, OURS]
    assert node["metadata"]["labels"] == {"pool": "h20", KEY: SITE}
    assert fake.owners["node-a", ("labels", KEY)] == {"nvcregen"}
    # nvcregen's own apply finds it set, and its release takes it off
    assert "node-a: already set" in run(retested, tmp_path, fake, "--apply").output
    released = patch(retested, tmp_path, fake, "--release")
    (doc,) = documents(released.stdout)
    assert doc["spec"] == {"taints": [OTHER_TAINT]}
    assert "labels" not in doc["metadata"] and "annotations" not in doc["metadata"]
    assert kubectl_apply(tmp_path, fake, released.stdout, force=True) == [200]
    assert fake.nodes["node-a"]["spec"]["taints"] == [OTHER_TAINT]
    assert KEY not in fake.nodes["node-a"]["metadata"]["labels"]


def test_a_node_without_taints_applies_without_force_and_documents_are_separated(
    two_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    text = patch(two_failed, tmp_path, fake).stdout
    assert [d["metadata"]["name"] for d in documents(text)] == ["node-a", "node-c"]
    assert text.count("\n---\n") == 1
    assert kubectl_apply(tmp_path, fake, text, force=False) == [409, 200]
    assert fake.nodes["node-c"]["spec"]["taints"] == [OURS]


def test_a_node_changed_after_the_patch_makes_its_apply_fail(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    text = patch(one_failed, tmp_path, fake).stdout
    late = {"key": "late/taint", "effect": "NoSchedule"}
    fake.update("node-a", "kubectl-taint", taints=[OTHER_TAINT, late])
    assert kubectl_apply(tmp_path, fake, text, force=True) == [409]  # resourceVersion
    assert late in fake.nodes["node-a"]["spec"]["taints"]


def test_a_missing_node_has_no_patch_and_exits_1(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    del fake.nodes["node-a"]
    result = patch(one_failed, tmp_path, fake)
    assert result.exit_code == 1
    assert documents(result.stdout) == []
    assert "# node-a: missing: no such node in the cluster" in result.stdout.splitlines()
    assert "# no patch: nothing to apply" in result.stdout.splitlines()


def test_release_writes_no_patch_for_another_runs_node(
    retested: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    assert run(retested, tmp_path, fake, "--apply").exit_code == 0
    fake.nodes["node-a"]["metadata"]["annotations"][RUN] = f"{SITE}/another-run"
    result = patch(retested, tmp_path, fake, "--release")
    assert result.exit_code == 0
    assert documents(result.stdout) == []
    assert f"# node-a: other run: quarantined by {SITE}/another-run, left as it is" in (
        result.stdout.splitlines()
    )


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ((), "--format patch reads each node: it needs --context CTX"),
        (("--context", "lab", "--apply"), "--format patch prints the applies instead"),
    ],
)
def test_patch_needs_a_context_and_no_apply(
    one_failed: Path, extra: tuple[str, ...], said: str
) -> None:
    args = ["quarantine", str(one_failed), "--site", site_of(one_failed), "--format", "patch"]
    result = CliRunner().invoke(main, [*args, *extra])
    assert result.exit_code == 2
    assert said in result.output


def test_patches_stop_at_the_first_node_the_api_cannot_read(
    two_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    fake.fail_after = 0  # every request answers 500
    config = kubeconfig(tmp_path, fake.url)  # type: ignore[attr-defined]
    slept: list[float] = []
    cluster = connect("lab", config, sleep=slept.append)
    archive = read_archive(two_failed)
    marks = marks_of(archive, judged_site(archive, Path(site_of(two_failed))))
    found = node_patches(cluster, marks, release=False)
    assert [(p.node, p.written) for p in found] == [("node-a", False), ("node-c", False)]
    assert found[0].note.startswith("not read: read refused: HTTP 500")
    assert found[1].note == "not read: a node before it was not"
    assert len([r for r in fake.seen if r.method == "GET"]) == 4  # node-a's tries alone
    text = as_patch(marks, found, release=False)
    assert documents(text) == []
    assert all(line.startswith("# ") for line in text.splitlines())


@pytest.mark.slow
@pytest.mark.parametrize(
    "test",
    ["nccl-all-reduce", "dcgm-l1"],  # a launcher log names its ranks' hosts, DCGM its node
)
def test_a_node_whose_slot_held_another_nodes_log_is_retested_not_quarantined(
    test: str, tmp_path: Path, fake: FakeNodes
) -> None:
    """Found by review: node-b's log in node-a's slot failed node-a (NVC730), and quarantine
    tainted it, though nothing in the run measured node-a: it is retested, never tainted."""
    site = tmp_path / "site.yaml"
    site.write_text(site_text(), encoding="utf-8")
    write_logs(tmp_path / "saved", site_text(), healthy)
    logs = tmp_path / "saved" / "logs" / "nvcre"
    slot = "g" if test.startswith("nccl") else "n"
    (mine,) = logs.glob(f"single-node-{test}-*-r1-{slot}0.log")
    (other,) = logs.glob(f"single-node-{test}-*-r1-{slot}1.log")
    shutil.copy(other, mine)
    out = tmp_path / "r"
    args = ["collect", "--site", str(site), "--from", str(tmp_path / "saved"), "--out", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 1
    (run_dir,) = (out / SITE).iterdir()
    archive = read_archive(run_dir)
    nodes = {n.node: n.status for n in archive.verdicts.nodes}
    # node-b's launcher log is in two slots: a copy (NVC740), so not cleared either; a DCGM
    # log naming node-b is refused as foreign before any copy is looked for
    owner = "untested" if test.startswith("nccl") else "cleared"
    assert nodes == {"node-a": "failed", "node-b": owner, "node-c": "cleared",
                     "node-d": "cleared"}  # fmt: skip
    marks = marks_of(archive, judged_site(archive, site))
    assert [m.node for m in marks.marks] == []
    (refused,) = marks.refused
    assert (refused.node, refused.status) == ("node-a", "failed")
    assert "evidence that is not its own (NVC730" in refused.why
    result = run(run_dir, tmp_path, fake, "--apply")
    assert result.exit_code == 1  # refused, and nothing sent
    assert fake.seen == []


# --- the gate before a node returns to service (issue #37, item 4) -----------------------


def fresh(tmp: Path, *bad: str) -> Path:
    """A run failing `bad` alone, in a site folder of its own, and its site file."""
    return collected(tmp, alone_slow(*bad))


def test_release_without_a_newer_run_refuses_and_names_the_missing_evidence(
    one_failed: Path, tmp_path: Path, fake: FakeNodes
) -> None:
    run_dir = forged(one_failed, tmp_path)  # alone in its site folder
    assert run(run_dir, tmp_path, fake, "--apply").exit_code == 0
    fake.seen.clear()
    result = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 1, result.output
    assert f"{SITE}/{run_dir.name}: nothing to release" in result.output
    assert (
        f"node-a (quarantined): no verified run newer than {SITE}/{run_dir.name} judges it:"
        " it needs a pass of single-node / nccl-all-reduce, two-node / nccl-all-reduce;"
        " readiness.periodic does not run stages single-node, two-node: run them again on"
        " the node with this site file"
    ) in result.output
    assert fake.seen == []
    assert {"key": KEY, "value": SITE, "effect": "NoSchedule"} in fake.nodes["node-a"]["spec"][
        "taints"
    ]
    data = json.loads(dry(run_dir, "--release", "--format", "json").output)
    assert data["nodes"] == []
    assert [(r["node"], r["status"]) for r in data["refused"]] == [("node-a", "quarantined")]


@pytest.mark.slow
def test_a_newer_run_that_fails_the_node_again_keeps_it_held(
    tmp_path: Path, fake: FakeNodes
) -> None:
    run_dir = fresh(tmp_path, "node-a")
    newer = collected_after(run_dir, alone_slow("node-a", busbw_gbs=305.0))
    assert run(run_dir, tmp_path, fake, "--apply").exit_code == 0
    result = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 1
    assert f"the newest run that judges it, {newer.name}, holds it failed" in result.output
    assert KEY in fake.nodes["node-a"]["metadata"]["labels"]


@pytest.mark.slow
def test_the_newest_run_decides_and_one_that_does_not_verify_is_no_evidence(
    tmp_path: Path, fake: FakeNodes
) -> None:
    run_dir = fresh(tmp_path, "node-a")
    collected_after(run_dir, healthy)
    again = collected_after(run_dir, alone_slow("node-a", busbw_gbs=305.0))  # failed again
    assert run(run_dir, tmp_path, fake, "--apply").exit_code == 0
    held = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert f"{again.name}, holds it failed" in held.output
    # the failing run changed after it was collected: it no longer counts, nor does the
    # cleared run before it decide alone (it is older than the changed run's collection)
    (again / "verdicts.json").write_text("{}", encoding="utf-8")
    released = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert released.exit_code == 0, released.output
    assert "node-a: released" in released.output


@pytest.mark.slow
def test_release_of_named_nodes_only(tmp_path: Path, fake: FakeNodes) -> None:
    run_dir = fresh(tmp_path, "node-a", "node-c")
    collected_after(run_dir, healthy)
    assert run(run_dir, tmp_path, fake, "--apply").exit_code == 0
    result = run(run_dir, tmp_path, fake, "--apply", "--release", "--node", "node-c")
    assert result.exit_code == 0, result.output
    assert "node-c: released" in result.output
    assert "node-a" not in result.output
    assert KEY in fake.nodes["node-a"]["metadata"]["labels"]
    assert KEY not in fake.nodes["node-c"]["metadata"]["labels"]
    other = run(run_dir, tmp_path, fake, "--apply", "--release", "--node", "node-b")
    assert other.exit_code == 1
    assert f"node-b (not quarantined): {SITE}/{run_dir.name} did not quarantine it" in (
        other.output
    )
    usage = dry(run_dir, "--node", "node-a")
    assert usage.exit_code == 2
    assert "--node names a node to release: it needs --release" in usage.output


def collected_elsewhere(run_dir: Path, text: str, busbw: Any = healthy) -> Path:
    """Collect logs (measured with `busbw`) against site text `text` into a folder of its
    own, then move the run into `run_dir`'s site folder (newer: collected after it)."""
    tmp = run_dir.parent.parent.parent
    other = tmp / f"other-{len(list(run_dir.parent.iterdir()))}"
    other.mkdir()
    (other / "site.yaml").write_text(text, encoding="utf-8")
    write_logs(other / "saved", text, busbw)
    args = ["collect", "--site", str(other / "site.yaml"), "--from", str(other / "saved")]
    CliRunner().invoke(main, [*args, "--out", str(other / "r")])
    (site_dir,) = (other / "r").iterdir()
    (run,) = site_dir.iterdir()
    return Path(shutil.move(run, run_dir.parent / run.name))


@pytest.mark.slow
def test_a_newer_run_of_another_site_is_no_evidence(tmp_path: Path, fake: FakeNodes) -> None:
    """Review: a verifying run of another site, in this site's folder, cleared node-a."""
    run_dir = fresh(tmp_path, "node-a")
    other = site_text().replace(f"name: {SITE}", "name: h20-3e-other", 1)
    moved = collected_elsewhere(run_dir, other)
    assert run(run_dir, tmp_path, fake, "--apply").exit_code == 0
    result = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 1, result.output
    assert "node-a: released" not in result.output
    assert (
        f"error[NVC782]: {moved.name} is a run of site 'h20-3e-other', not of '{SITE}'"
        " (the quarantine's): no evidence for this site's nodes"
    ) in result.output
    assert KEY in fake.nodes["node-a"]["metadata"]["labels"]
    collected_after(run_dir, healthy)  # a run of its own site clears it
    released = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert released.exit_code == 0, released.output
    assert "node-a: released" in released.output


@pytest.mark.slow
def test_a_newer_run_judged_against_another_site_file_is_no_evidence(
    tmp_path: Path, fake: FakeNodes
) -> None:
    """Same site name, another file (a threshold lowered, say): its verdicts are not the
    quarantine's; a file's sha256 is checked only where both runs record one."""
    from nvcregen.quarantine.evidence import newer_runs

    run_dir = fresh(tmp_path, "node-a")
    moved = collected_elsewhere(run_dir, site_text() + "# edited\n")
    assert run(run_dir, tmp_path, fake, "--apply").exit_code == 0
    result = run(run_dir, tmp_path, fake, "--apply", "--release")
    assert result.exit_code == 1, result.output
    mine = hashlib.sha256(site_text().encode()).hexdigest()
    theirs = hashlib.sha256((site_text() + "# edited\n").encode()).hexdigest()
    assert (
        f"error[NVC783]: {moved.name} was judged against site file sha256 {theirs[:12]},"
        f" not {mine[:12]} as the quarantine was"
    ) in result.output
    assert "node-a: released" not in result.output
    assert newer_runs(run_dir, SITE, "").verified[0][0] == moved.name  # no file to check
    assert newer_runs(run_dir, SITE, mine).verified == ()


@pytest.mark.slow
def test_the_gate_reads_only_a_newer_runs_site_and_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: the gate read every newer run whole (bandwidth.csv, every run and log of
    summary.json, the signature); it reads what decides now, verification unchanged."""
    from nvcregen.quarantine.evidence import newer_runs
    from nvcregen.results import archiveread
    from nvcregen.spec.bounded import read_limited

    run_dir = fresh(tmp_path, "node-a")
    newer = collected_after(run_dir, healthy)
    read: list[str] = []
    real = read_limited

    def recorded(path: Path, cap: int) -> bytes | None:
        if path.parent == newer:
            read.append(path.name)
        return real(path, cap)

    monkeypatch.setattr(archiveread, "read_limited", recorded)
    evidence = newer_runs(run_dir, SITE)
    ((run_id, judged),) = evidence.verified
    assert (run_id, judged.statuses) == (newer.name, dict.fromkeys(NODES, "cleared"))
    assert judged.tests["node-a"][("two-node", "nccl-all-reduce")] == "pass"
    assert "bandwidth.csv" not in read
    assert "attestation.dsse.json" not in read
    assert {"summary.json", "provenance.json", "verdicts.json"} <= set(read)
    (newer / "bandwidth.csv").write_text("changed\n", encoding="utf-8")
    assert newer_runs(run_dir, SITE).unverified == (newer.name,)  # still verified first


def test_a_fleets_refusals_name_a_few_runs_and_count_the_rest() -> None:
    """Review: each held node's refusal listed every unverified run and every foreign
    finding (nodes x runs: 37 MB at 1,024 nodes and 500 runs); it names three of each and
    counts the rest. The newest verdict per node comes from one pass over the runs."""
    from nvcregen.quarantine.evidence import NAMED, Evidence, gate_release
    from nvcregen.results.judgednodes import JudgedNodes

    runs = tuple(f"r{i:03d}" for i in range(10))
    foreign = tuple(f"error[NVC782]: f{i} is a run of site 'x'" for i in range(7))
    marks = Marks(
        SITE, f"{SITE}/r", tuple(Mark(f"n{i}", SITE, f"{SITE}/r", "failed") for i in range(4)), ()
    )
    held = gate_release(marks, Evidence((), runs, foreign))
    assert [r.node for r in held.refused] == ["n0", "n1", "n2", "n3"] and not held.marks
    why = held.refused[0].why
    assert f"r000, r001, r002 and {len(runs) - NAMED} more do not verify" in why
    assert "r003" not in why
    assert why.count("error[NVC782]") == NAMED and "and 4 more runs of another site" in why
    # the newest verified run judging a node decides, whatever older runs said
    verified = (
        ("r1", JudgedNodes(SITE, "", {"n0": "failed", "n1": "cleared"})),
        ("r2", JudgedNodes(SITE, "", {"n0": "cleared"})),
    )
    evidence = Evidence(verified, ())
    assert evidence.judged("n0") == ("r2", "cleared")
    assert evidence.judged("n1") == ("r1", "cleared") and evidence.judged("n9") is None
    # marks naming no test that failed them are not released on a `cleared` status alone
    held = gate_release(marks, evidence)
    assert not held.marks and [r.node for r in held.refused] == ["n0", "n1", "n2", "n3"]
    assert "clears it, but neither" in held.refused[0].why  # r2 judges n0 cleared
