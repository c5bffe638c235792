"""Pins (issue 12 item 7): charts and controllers by digest, example digests, offline sshd."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sitefactory import catalog, edit, parse, site_yaml, units_of
from trainerfactory import compiled, trainer_text

from nvcregen.cli import main
from nvcregen.compile.platform.pins import check_pins, pins
from nvcregen.core.errors import Severity

ROOT = Path(__file__).resolve().parents[3]
DIGEST = "sha256:" + "d" * 64
EXAMPLE = "sha256:bd0ef2338262680d491f20e9a70f33c5178d2520a8dbfe7f538ac29ec5f2d67b"
PAIRS = "- {name: pair, scope: inter-node, tests: [nccl-all-reduce]}\n"


def _check(text: str, *, strict: bool = False) -> list[tuple[str, Severity, str]]:
    site, doc = parse(text)
    found = check_pins(site, doc, catalog().examples, units_of(text), strict=strict)
    return [(d.code, d.severity, d.path) for d in found]


def test_every_chart_and_controller_is_listed_with_where_its_digest_goes() -> None:
    site, _ = parse(site_yaml(dependencies="jobset: {managed: true}"))
    assert [(p.pointer, p.digest) for p in pins(site)] == [
        ("/spec/nvcre/chart/digest", None),
        ("/spec/nvcre/image/digest", None),
        ("/spec/dependencies/trainer/chartDigest", None),
        ("/spec/dependencies/trainer/imageDigest", None),
        ("/spec/dependencies/jobset/imageDigest", None),
        ("/spec/dependencies/kueue/chartDigest", None),
        ("/spec/dependencies/kueue/imageDigest", None),
    ]


def test_unpinned_charts_and_controllers_are_nvc377_errors_under_strict() -> None:
    """Before issue 12 `--strict` passed all of these."""
    found = [f for f in _check(site_yaml(), strict=True) if f[0] != "NVC376"]  # examples
    assert {code for code, _, _ in found} == {"NVC377"}
    assert {severity for _, severity, _ in found} == {Severity.ERROR}
    assert ("NVC377", Severity.ERROR, "/spec/dependencies/trainer/imageDigest") in found
    assert {s for c, s, _ in _check(site_yaml()) if c == "NVC377"} == {Severity.WARNING}


def test_a_fully_pinned_site_passes() -> None:
    text = site_yaml(
        dependencies=(
            f"trainer: {{chartDigest: {DIGEST}, imageDigest: {DIGEST}}}\n"
            f"kueue: {{chartDigest: {DIGEST}, imageDigest: {DIGEST}}}\n"
        )
    )
    text = edit(
        text,
        "  dependencies:\n",
        f"  nvcre: {{chart: {{digest: {DIGEST}}}, image: {{digest: {DIGEST}}}}}\n  dependencies:\n",
    )
    # the factory's workload images carry example digests: info, or errors under strict
    assert {c for c, _, _ in _check(text)} == {"NVC376"}
    assert {s for _, s, _ in _check(text)} == {Severity.INFO}
    real = text.replace(
        "4c1ad2a5ba5cd7a1b5e7c16cbc8cc5e5a7f5b5d5a4f2e4b9c86a1d0f3b2e6c7d", "e" * 64
    )
    real = real.replace(
        "9e0f5b7c6d1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4", "e" * 64
    )
    real = real.replace("1" * 64, "e" * 64)
    assert _check(real, strict=True) == []


def test_an_example_digest_is_nvc376_at_its_line() -> None:
    text = site_yaml(dependencies=f"trainer: {{chartDigest: {EXAMPLE}}}")
    found = [
        f for f in _check(text, strict=True) if f[2] == "/spec/dependencies/trainer/chartDigest"
    ]
    assert found == [("NVC376", Severity.ERROR, "/spec/dependencies/trainer/chartDigest")]


def test_an_offline_site_needs_sshd_in_its_nccl_image_for_multi_node_runs() -> None:
    offline = site_yaml(stages=PAIRS, images="mirror: registry.internal/m\n")
    assert ("NVC378", Severity.ERROR, "/spec/images") in _check(offline)
    shipped = site_yaml(stages=PAIRS, images="mirror: registry.internal/m\nncclShipsSshd: true\n")
    assert "NVC378" not in {c for c, _, _ in _check(shipped)}
    online = site_yaml(stages=PAIRS)
    assert "NVC378" not in {c for c, _, _ in _check(online)}


def test_offline_workers_never_apt_get_sshd() -> None:
    images = "mirror: registry.internal/m\nncclShipsSshd: true\n"
    found = compiled(trainer_text(site_yaml(stages=PAIRS, images=images)))
    scripts = [
        c["command"][2]
        for m in found
        if m.kind == "TrainingRuntime"
        for job in m.obj["spec"]["template"]["spec"]["replicatedJobs"]
        for c in job["template"]["spec"]["template"]["spec"]["containers"]
        if "command" in c
    ]
    assert scripts and not any("apt-get" in s for s in scripts)
    assert all("the site is offline" in s for s in scripts)


@pytest.mark.parametrize("name", ["h20-3e-lab", "h20-3e-trainer", "l20-pool"])
def test_strict_refuses_the_shipped_sites_only_for_their_example_digests(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sites").mkdir()
    shutil.copyfile(ROOT / "sites" / f"{name}.yaml", tmp_path / "sites" / f"{name}.yaml")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["render", "--strict"])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if ": error[" in line]
    assert errors and all("error[NVC376]" in line for line in errors)
    assert "every error is an example digest" in result.output.splitlines()[-1]
    assert CliRunner().invoke(main, ["render"]).exit_code == 0
