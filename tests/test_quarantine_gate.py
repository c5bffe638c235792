"""The release gate asks for evidence of what failed a node (`quarantine --release`).

A quarantined node is released only when a newer verified run of its site judged it
`pass` on every test that failed it: a periodic run of the link counters alone is no
evidence about a node that failed its burn-in. Archives are written with
`reportfactory.judged_run` (each node's groups and words, as verdicts.json holds them);
the gate is asked through the command, as a dry run (no cluster).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from reportfactory import NodeGroups, judged_run

from nvcregen.cli import main

SITE = "edge-lab"
SITE_TEXT = """\
apiVersion: nvcregen.io/v1alpha1
kind: Site
metadata: {name: edge-lab}
spec:
  nodePools:
    - {name: gpu, nodes: [node-a, node-b, node-c]}
  readiness:
    periodic: {schedule: '0 3 * * 0', stages: [links]}
    stages:
      - {name: burn, scope: intra-node, tests: [burn-in]}
      - {name: links, scope: intra-node, tests: [link-counters]}
      - {name: nccl, scope: intra-node, tests: [nccl-all-reduce]}
"""
SHA = hashlib.sha256(SITE_TEXT.encode()).hexdigest()
BURN, LINKS, NCCL = ("burn", "burn-in"), ("links", "link-counters"), ("nccl", "nccl-all-reduce")
EVERY = (BURN, LINKS, NCCL)


def groups(words: dict[tuple[str, str], str]) -> list[tuple[str, str, str]]:
    return [(stage, test, word) for (stage, test), word in words.items()]


def words(failed: dict[str, tuple[tuple[str, str], ...]], ran: tuple[tuple[str, str], ...] = EVERY,
          nodes: tuple[str, ...] = ("node-a", "node-b", "node-c")) -> NodeGroups:  # fmt: skip
    """Each node's groups: every test of `ran` passed, but those `failed` names for it."""
    return {
        n: groups({t: "fail" if t in failed.get(n, ()) else "pass" for t in ran}) for n in nodes
    }


def run_at(folder: Path, hour: int, nodes: NodeGroups, **kw: Any) -> Path:
    """A run measured until `hour`:00 on 2026-11-01 (its id dated so)."""
    run_id = f"20261101T{hour:02d}0000Z-{hour:012x}"
    return judged_run(folder, run_id, f"2026-11-01T{hour:02d}:00:00Z", nodes, **kw)


def release(run_dir: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    site = run_dir.parent.parent / "site.yaml"
    args = ["quarantine", str(run_dir), "--site", str(site), "--release", "--format", "json"]
    result = CliRunner().invoke(main, [*args, *extra])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def released(data: dict[str, Any]) -> list[str]:
    return [n["node"] for n in data["nodes"]]


def refusal(data: dict[str, Any], node: str) -> str:
    (why,) = [r["why"] for r in data["refused"] if r["node"] == node]
    return str(why)


def site_folder(tmp: Path) -> Path:
    """The site folder of the runs, beside the site file they were judged against."""
    folder = tmp / "results" / SITE
    folder.mkdir(parents=True)
    (folder.parent / "site.yaml").write_text(SITE_TEXT, encoding="utf-8")
    return folder


def test_a_link_counters_only_period_does_not_clear_a_burn_in_failed_node(
    tmp_path: Path,
) -> None:
    folder = site_folder(tmp_path)
    failing = run_at(folder, 10, words({"node-a": (BURN,)}), site_sha256=SHA)
    run_at(folder, 11, words({}, ran=(LINKS,)), site_sha256=SHA)  # a period: links only
    code, data = release(failing)
    assert code == 1
    assert released(data) == []
    why = refusal(data, "node-a")
    assert "burn / burn-in" in why, why
    assert "no newer run ran it on this node" in why
    assert "readiness.periodic does not run stage burn: run it again on the node" in why
    assert "`nvcregen retest` writes another site" in why
    # the mark records the tests that failed it, on the node and in what is printed
    (mark,) = dry(failing)["nodes"]
    assert mark["annotations"]["nvcregen.io/quarantine-tests"] == "burn/burn-in"
    assert (mark["tests"], mark["testsFrom"]) == ([{"stage": "burn", "test": "burn-in"}], "run")


def dry(run_dir: Path) -> dict[str, Any]:
    """`quarantine` as a dry run (what it would set), JSON."""
    site = run_dir.parent.parent / "site.yaml"
    args = ["quarantine", str(run_dir), "--site", str(site), "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def test_a_newer_run_passing_the_failing_test_on_the_node_clears_it(tmp_path: Path) -> None:
    folder = site_folder(tmp_path)
    failing = run_at(folder, 10, words({"node-a": (BURN,)}), site_sha256=SHA)
    run_at(folder, 11, words({}, ran=(BURN,)), site_sha256=SHA)  # the burn-in again
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])
    # a period after it (links only) keeps it cleared: the burn-in's newest run passed it
    run_at(folder, 12, words({}, ran=(LINKS,)), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])


def test_the_test_ran_on_other_nodes_but_not_this_one_is_refused(tmp_path: Path) -> None:
    folder = site_folder(tmp_path)
    failing = run_at(folder, 10, words({"node-a": (BURN,)}), site_sha256=SHA)
    newer = words({}, ran=(BURN, LINKS), nodes=("node-b", "node-c"))
    newer["node-a"] = groups({LINKS: "pass"})  # the burn-in skipped node-a
    run_at(folder, 11, newer, site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (1, [])
    assert "burn / burn-in (no newer run ran it on this node)" in refusal(data, "node-a")


def test_a_test_failed_again_since_and_not_passed_after_keeps_the_node_held(
    tmp_path: Path,
) -> None:
    """The newest run that ran a test on the node decides it: a burn-in failed again,
    then a period of the links alone, still lacks the burn-in; so does a test a newer run
    failed (nccl), though the quarantine was for another."""
    folder = site_folder(tmp_path)
    failing = run_at(folder, 10, words({"node-a": (BURN,)}), site_sha256=SHA)
    run_at(folder, 11, words({}, ran=(BURN,)), site_sha256=SHA)  # passed it
    again = run_at(folder, 12, words({"node-a": (BURN, NCCL)}), site_sha256=SHA)
    run_at(folder, 13, words({}, ran=(LINKS,)), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (1, [])
    why = refusal(data, "node-a")
    assert f"burn / burn-in (the newest run that ran it on this node, {again.name}" in why
    assert "judged it fail)" in why
    assert "nccl / nccl-all-reduce (the newest run that ran it on this node" in why
    run_at(folder, 14, words({}, ran=(BURN,)), site_sha256=SHA)  # burn-in passed again
    code, data = release(failing)
    assert "burn / burn-in" not in refusal(data, "node-a")
    assert "nccl / nccl-all-reduce" in refusal(data, "node-a")
    run_at(folder, 15, words({}, ran=(NCCL,)), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])


def test_a_failed_node_recording_no_failing_test_needs_every_test_the_site_runs_on_it(
    tmp_path: Path,
) -> None:
    """A verdict that names a node failed but no group it failed (an archive not written
    by collect): the tests that failed it are not known, so the site's plan for the node
    stands in for them."""
    folder = site_folder(tmp_path)
    nodes = words({})
    nodes["node-a"] = []
    failing = run_at(folder, 10, nodes, site_sha256=SHA, statuses={"node-a": "failed"})
    (mark,) = dry(failing)["nodes"]
    assert mark["testsFrom"] == "plan"
    assert [(t["stage"], t["test"]) for t in mark["tests"]] == list(EVERY)
    assert mark["annotations"]["nvcregen.io/quarantine-tests"] == (
        "not recorded; every test the site runs on it: burn/burn-in, links/link-counters,"
        " nccl/nccl-all-reduce"
    )
    run_at(folder, 11, words({}, ran=(BURN, LINKS)), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (1, [])
    why = refusal(data, "node-a")
    assert f"each test the site runs on it ({SITE}/{failing.name} records no test" in why
    assert "nccl / nccl-all-reduce (no newer run ran it on this node)" in why
    assert "burn / burn-in" not in why
    run_at(folder, 12, words({}, ran=(NCCL,)), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])


def test_only_runs_newer_than_the_mark_are_evidence(tmp_path: Path) -> None:
    """Boundaries: the quarantining run itself, a run measured before it (its burn-in
    passed) and a copy of it under another name are no evidence; a run of another site or
    site file is none either."""
    folder = site_folder(tmp_path)
    run_at(folder, 9, words({}), site_sha256=SHA)  # older: every test passed
    failing = run_at(folder, 10, words({"node-a": (BURN,)}), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (1, [])
    assert f"no verified run newer than {SITE}/{failing.name} judges it" in refusal(data, "node-a")
    copy = shutil.copytree(failing, folder / "zz-copy")  # kept as the run's own folder
    assert "no verified run newer than" in refusal(release(failing)[1], "node-a")
    shutil.rmtree(copy)
    other = run_at(folder, 11, words({}), site="edge-other", site_sha256=SHA)
    edited = run_at(folder, 12, words({}), site_sha256="cd" * 32)
    why = refusal(release(failing)[1], "node-a")
    assert f"error[NVC782]: {other.name} is a run of site 'edge-other'" in why
    assert f"error[NVC783]: {edited.name} was judged against site file sha256" in why
    run_at(folder, 13, words({}, ran=(LINKS,)), site_sha256=SHA)  # its own: links only
    assert "burn / burn-in (no newer run ran it" in refusal(release(failing)[1], "node-a")


def test_the_gate_verifies_only_the_runs_newer_than_the_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: every release verified every run of the site folder (`locate`): 13
    verifications here (the run, then all 12 listed), where 4 decide (the run and the
    three newer). Two folders holding one run are both verified: which is kept depends
    on it, as in `locate`."""
    from nvcregen.results.archive import verify_archive

    folder = site_folder(tmp_path)
    runs = [run_at(folder, h, words({"node-a": (BURN,)} if h == 8 else {}), site_sha256=SHA)
            for h in range(12)]  # fmt: skip
    failing = runs[8]
    seen: list[str] = []
    real = verify_archive

    def counted(path: Path) -> list[str]:
        seen.append(path.name)
        return real(path)

    monkeypatch.setattr("nvcregen.report.folder.verify_archive", counted)
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])
    assert sorted(seen) == sorted(r.name for r in runs[8:])  # was 13: the run and all 12
    assert seen.count(failing.name) == 1
    twin = shutil.copytree(runs[2], folder / "a-twin")  # an older run under another name
    seen.clear()
    release(failing)
    assert sorted(seen) == sorted([twin.name, runs[2].name, *(r.name for r in runs[8:])])
    (runs[10] / "verdicts.json").write_text("{}", encoding="utf-8")  # changed after collect
    seen.clear()
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])  # runs[9] and runs[11] still clear it
    assert runs[10].name in seen


def test_a_failure_in_a_periodic_stage_is_cleared_by_the_next_period(tmp_path: Path) -> None:
    folder = site_folder(tmp_path)
    failing = run_at(folder, 10, words({"node-a": (LINKS,)}), site_sha256=SHA)
    site = str(folder.parent / "site.yaml")
    text = CliRunner().invoke(main, ["quarantine", str(failing), "--site", site]).output
    assert "  node-a (tests: links/link-counters): failed in this run" in text.splitlines()
    why = refusal(release(failing)[1], "node-a")
    assert (
        "it needs a pass of links / link-counters; the next period of readiness.periodic"
        " runs stage links (`nvcregen collect --period latest`); collect into this site"
        " folder, then release"
    ) in why
    run_at(folder, 11, words({}, ran=(LINKS,)), site_sha256=SHA)
    code, data = release(failing)
    assert (code, released(data)) == (0, ["node-a"])


def test_the_tests_annotation_is_cut_whole_at_its_bound() -> None:
    """At most 1,000 characters of `<stage>/<test>` entries, whole, then a count."""
    from nvcregen.quarantine.marks import tests_text

    tests = [(f"s{i}", "t" * (97 - len(f"s{i}"))) for i in range(9)] + [("s9", "t" * 97)]
    text = tests_text(tuple(tests))
    assert len(text) == 1000 and "more" not in text  # 9 x 98 + 100 + 9 separators
    longer = tests_text((*tests[:-1], ("s9", "t" * 98)))
    assert longer.endswith("t and 1 more") and "s9/" not in longer


def test_the_gate_reads_the_groups_of_the_nodes_it_asks_about(tmp_path: Path) -> None:
    """A fleet's run holds every node's groups; a release asks of its marks' nodes, so
    only theirs are checked and worded (the statuses of all are read)."""
    from nvcregen.results.archivemodel import ArchiveFileError
    from nvcregen.results.judgednodes import judged_nodes

    run = run_at(site_folder(tmp_path), 10, words({"node-b": (NCCL,)}))
    judged = judged_nodes(run, frozenset({"node-a"}))
    assert judged.statuses == {"node-a": "cleared", "node-b": "failed", "node-c": "cleared"}
    assert judged.tests == {"node-a": dict.fromkeys(EVERY, "pass")}
    assert judged_nodes(run).tests["node-b"][NCCL] == "fail"
    data = json.loads((run / "verdicts.json").read_text(encoding="utf-8"))
    data["nodes"][1]["runs"][2]["word"] = "maybe"  # node-b's: not what collect writes
    (run / "verdicts.json").write_text(json.dumps(data), encoding="utf-8")
    assert judged_nodes(run, frozenset({"node-a"})).tests["node-a"][BURN] == "pass"
    with pytest.raises(ArchiveFileError, match=r"^verdicts\.json: nodes\.1\.runs\.2\.word: "):
        judged_nodes(run, frozenset({"node-b"}))


def test_stage_and_test_names_read_from_an_archive_are_printed_escaped(tmp_path: Path) -> None:
    folder = site_folder(tmp_path)
    hostile = ("burn\x1b[2J\x07", "burn-in\x07")  # click strips ESC [ off a pipe, not BEL
    nodes = words({"node-a": (hostile,)}, ran=(hostile, LINKS))
    failing = run_at(folder, 10, nodes, site_sha256=SHA)
    run_at(folder, 11, words({}, ran=(LINKS,)), site_sha256=SHA)
    site = str(folder.parent / "site.yaml")
    args = ["quarantine", str(failing), "--site", site]
    for extra in ((), ("--release",)):
        result = CliRunner().invoke(main, [*args, *extra])
        assert "\x1b" not in result.output and "\x07" not in result.output, result.output
        assert "burn\\x1b[2J\\x07" in result.output


def test_a_node_no_test_is_known_to_have_failed_is_not_released_on_its_status_alone(
    tmp_path: Path,
) -> None:
    """A failed node whose run records no failing group, in a pool no stage runs on: neither
    the run nor the site says what a newer run must pass, so a `cleared` status alone is no
    evidence and the node stays held."""
    text = SITE_TEXT.replace(
        "    - {name: gpu, nodes: [node-a, node-b, node-c]}\n",
        "    - {name: gpu, nodes: [node-a, node-b, node-c]}\n"
        "    - {name: spare, nodes: [node-d]}\n",
    ).replace("scope: intra-node,", "scope: intra-node, pool: gpu,")
    folder = tmp_path / "results" / SITE
    folder.mkdir(parents=True)
    (folder.parent / "site.yaml").write_text(text, encoding="utf-8")
    sha = hashlib.sha256(text.encode()).hexdigest()
    nodes = words({})
    nodes["node-d"] = []
    failing = run_at(folder, 10, nodes, site_sha256=sha, statuses={"node-d": "failed"})
    (mark,) = dry(failing)["nodes"]
    assert (mark["node"], mark["testsFrom"], mark["tests"]) == ("node-d", "plan", [])
    later = words({}, nodes=("node-a", "node-b", "node-c"))
    later["node-d"] = []
    run_at(folder, 11, later, site_sha256=sha, statuses={"node-d": "cleared"})
    code, data = release(failing)
    assert (code, released(data)) == (1, [])
    assert "names a test that ran on it" in refusal(data, "node-d")
