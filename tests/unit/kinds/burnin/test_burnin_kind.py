"""The burnin kind (issue #36, item 4): catalog block, budgeted time, script, both engines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from sitefactory import catalog, parse
from trainerfactory import EXAMPLE, compiled, of_kind, without_packing

from nvcregen.cli import main
from nvcregen.compile.readiness.nodescript import node_script
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.kindapi.protocol import FixedTime, NodeRun
from nvcregen.kindapi.registry import KINDS, kind_of
from nvcregen.kinds.burnin.judge import Bounds, judge
from nvcregen.kinds.burnin.kind import KIND as BURNIN
from nvcregen.kinds.burnin.params import BurnInExpectation, BurnInParams
from nvcregen.kinds.burnin.reader import BurnInRun, GpuLoad
from nvcregen.plan.resolve import plan
from nvcregen.validate.semantic import check_references

ROOT = Path(__file__).resolve().parents[4]
STAGE = "      - name: single-node\n        scope: intra-node\n        tests: ["
SOURCES = ["a test"]


def h20_site(text: str | None = None) -> str:
    """The example trainer site on H20 (the 96 GB part) with burn-in in its first stage."""
    text = text if text is not None else without_packing(EXAMPLE.read_text())
    assert STAGE in text and "model: H20-3e" in text
    text = text.replace("model: H20-3e", "model: H20").replace("[NVIDIA-H20-3e]", "[NVIDIA-H20]")
    return text.replace(STAGE, STAGE + "burn-in, ", 1)


def burnin_unit(text: str):  # type: ignore[no-untyped-def]
    site, _ = parse(text)
    return site, next(u for u in plan(site, catalog()) if u.test.name == "burn-in")


def test_the_catalog_entry_is_a_per_node_kind_reading_dcgm() -> None:
    test = catalog().tests["burn-in"]
    kind = kind_of(test)
    assert KINDS["burnin"] is kind is BURNIN and BURNIN.block_or_none(test) is not None
    assert (kind.per_node, kind.one_node, kind.collective, kind.node_health) == (
        True,
        True,
        False,
        False,
    )
    assert (kind.log_format, kind.pod_size, kind.node_container) == (
        "dcgm-burnin",
        "dcgm",
        "burn-in",
    )
    assert (test.image, BURNIN.block(test).plugin, BURNIN.block(test).precision) == (
        "dcgm",
        "targeted_stress",
        "fp32",
    )


def test_its_duration_is_budgeted_pod_start_set_up_and_the_load() -> None:
    test = catalog().tests["burn-in"]
    assert kind_of(test).fixed_time(test, "15s") == FixedTime(
        735.0, "15s start-up + DCGM set-up 2m + targeted_stress 10m"
    )
    longer_block = BURNIN.block(test).model_copy(update={"duration": "30m"})
    longer = test.model_copy(update={"burnin": longer_block})
    assert kind_of(longer).fixed_time(longer, "15s") == FixedTime(
        1935.0, "15s start-up + DCGM set-up 2m + targeted_stress 30m"
    )
    assert kind_of(test).duration_basis(test) == "targeted_stress 10m + set-up 2m"


def test_expectations_for_h100_h200_h20_l20_each_within_its_peak_with_sources() -> None:
    burnin = BURNIN.block(catalog().tests["burn-in"])
    found = {e.model: (e.target_gflops, e.peak_gflops) for e in burnin.expectations}
    assert found == {
        "H100": (29250, 67000),
        "H200": (37500, 67000),
        "H20": (20850, 44000),
        "L20": (27000, 59800),
    }
    for e in burnin.expectations:
        hardware = catalog().find_hardware(e.model)
        assert hardware is not None and hardware.model == e.model, e.model  # as pools name it
        assert burnin.floor_of(e) <= e.peak_gflops and len(e.sources) >= 2, e.model


def params(target: float, peak: float, precision: str = "fp32") -> BurnInParams:
    return BurnInParams.model_validate(
        {
            "duration": "10m",
            "setup": "2m",
            "precision": precision,
            "minRatio": 1.0,
            "expectations": [
                {"model": "H20", "targetGflops": target, "peakGflops": peak, "sources": SOURCES}
            ],
        }
    )


def test_a_floor_is_refused_exactly_above_its_models_peak() -> None:
    assert params(44000, 44000).floor_of(params(44000, 44000).expectations[0]) == 44000
    with pytest.raises(ValidationError, match=r"H20: the floor 44000\.5 GFLOPS .* above its fp32"):
        params(44000.5, 44000)


def test_autopilots_fixed_dgemm_floor_would_fail_every_h20_the_per_model_figure_does_not() -> None:
    # IBM Autopilot fails a GPU below 16 TFLOPS of DGEMM; the H20 computes 1 TFLOPS of FP64
    # (NVIDIA HGX H20 product brief), so that floor fails every H20, healthy or not.
    with pytest.raises(ValidationError, match=r"H20: the floor 16000 GFLOPS .* fp64 peak 1000"):
        params(16000, 1000, "fp64")
    healthy = BurnInRun("h20.log", "targeted_stress", "ok", (GpuLoad(0, "Pass", 950.0, "average"),))
    fixed = judge(healthy, Bounds("H20", 16000, 1000, "fp64"))
    assert not fixed.passed and fixed.gpus[0].why.startswith("NVC768: GPU 0: 950 GFLOPS")
    own = params(760, 1000, "fp64")  # 0.76 of its own peak, as DCGM's 0.75 of measured
    bounds = Bounds("H20", own.floor_of(own.expectations[0]), 1000, "fp64")
    assert judge(healthy, bounds).passed


def test_a_model_named_twice_is_refused() -> None:
    one = {"model": "H20", "targetGflops": 1, "peakGflops": 2, "sources": SOURCES}
    with pytest.raises(ValidationError, match=r"named once \(twice: H20\)"):
        BurnInParams.model_validate({"duration": "1m", "setup": "1m", "expectations": [one, one]})
    assert isinstance(BurnInExpectation.model_validate(one), BurnInExpectation)


def test_the_script_asks_dcgm_for_the_models_target_and_the_catalogs_duration() -> None:
    test = catalog().tests["burn-in"]
    found = kind_of(test).node_script(test, NodeRun(8, 900_000, 840, None, model="H100"))
    assert found is not None and found.template == "burn-in.sh.j2"
    assert found.package == "nvcregen.kinds.burnin"  # its template is the package's own data
    assert (ROOT / "nvcregen" / "kinds" / "burnin" / "templates" / found.template).is_file()
    assert found.values["params"] == (
        "targeted_stress.is_allowed=true;targeted_stress.test_duration=600;"
        "targeted_stress.use_dgemm=false;targeted_stress.target_perf_min_ratio=0.95;"
        "targeted_stress.target_stress=29250"
    )
    assert found.values["deadline_s"] == 840
    other = kind_of(test).node_script(test, NodeRun(8, 900_000, 840, None, model="A100"))
    assert other is not None and "target_stress=" not in str(other.values["params"])
    dgemm_block = BURNIN.block(test).model_copy(update={"precision": "fp64"})
    dgemm = test.model_copy(update={"burnin": dgemm_block})
    found = kind_of(dgemm).node_script(dgemm, NodeRun(8, 900_000, 840, None, model="H20"))
    assert found is not None and "use_dgemm=true" in str(found.values["params"])


def test_the_rendered_script_names_its_node_and_runs_dcgm_in_the_pod() -> None:
    site, unit = burnin_unit(h20_site())
    script = node_script(site, unit)
    assert 'echo "@@nvcregen-burnin begin node=${NODE_NAME:?NODE_NAME is not set}' in script
    assert "nv-hostengine\nhost=127.0.0.1" in script  # never the site's hostengine Service
    assert 'dcgmi diag --host "$host" --run targeted_stress' in script
    assert "targeted_stress.target_stress=20850' --json --verbose" in script
    if (bash := shutil.which("bash")) is not None:
        assert subprocess.run([bash, "-n", "-c", script], check=False).returncode == 0


def test_trainer_mode_runs_a_job_per_node_holding_every_gpu() -> None:
    jobs = of_kind(compiled(h20_site()), "Job", "burn-in")
    assert jobs
    (container,) = jobs[0]["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "burn-in"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert "@@nvcregen-burnin begin" in container["command"][2]


def test_nvcre_mode_is_a_workloadrun_running_the_same_script() -> None:
    site, unit = burnin_unit(re.sub(r"(?m)^    engine: trainer .*\n", "", h20_site()))
    assert site.spec.readiness.engine == "nvcre"
    runs = [m.obj for m in readiness_manifests(site, [unit]) if m.kind == "WorkloadRun"]
    (run,) = runs
    command = run["spec"]["framework"]["exec"]["command"]
    assert command[:2] == ["/bin/bash", "-c"] and "--run targeted_stress" in command[2]
    assert run["spec"]["gpusPerNode"] == 8


def test_a_pool_whose_model_has_no_figures_is_refused_nvc337() -> None:
    site, doc = parse(h20_site())
    assert not [d for d in check_references(site, catalog(), doc) if d.code == "NVC337"]
    text = without_packing(EXAMPLE.read_text()).replace(STAGE, STAGE + "burn-in, ", 1)
    site, doc = parse(text)  # the H20-3e: no figures in the catalog
    (found,) = [d for d in check_references(site, catalog(), doc) if d.code == "NVC337"]
    assert found.message == (
        "burn-in judges each GPU against its model's figures, and the catalog states none for"
        " H20-3e (it does for: H100, H200, H20, L20): every node would be unjudged"
    )
    assert "catalog/tests/" in (found.hint or "")


WINDOW = "window: {maxConcurrentJobs: 2, deadline: 16h, gpuHours: 260, retests: 1}"
ROOMY = "window: {maxConcurrentJobs: 2, deadline: 24h, gpuHours: 400, retests: 1}"


def _project(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "sites").mkdir(exist_ok=True)
    path = tmp_path / "sites" / f"{name}.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("readiness", "gitops"),
    [("trainer", "argocd"), ("nvcre", "argocd"), ("trainer", "flux"), ("nvcre", "flux")],
)
def test_a_site_naming_it_renders_checks_and_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readiness: str, gitops: str
) -> None:
    text = h20_site(EXAMPLE.read_text())
    if readiness == "nvcre":
        text = re.sub(r"(?m)^    engine: trainer .*\n", "", without_packing(text))
    if gitops == "flux":
        text = text.replace("    engine: argocd\n", "    engine: flux\n")
    text = text.replace("name: h20-3e-trainer", "name: h20-burnin").replace(WINDOW, ROOMY)
    _project(
        tmp_path, "h20-burnin", text.replace("path: out/h20-3e-trainer", "path: out/h20-burnin")
    )
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(main, ["render"])
    assert done.exit_code == 0, done.output
    rendered = "\n".join(p.read_text() for p in (tmp_path / "out").rglob("*.yaml"))
    assert "@@nvcregen-burnin begin" in rendered
    assert ("kind: WorkloadRun" in rendered) == (readiness == "nvcre")
    assert ("apiVersion: kustomize.toolkit.fluxcd.io/" in rendered) == (gitops == "flux")
    assert ("apiVersion: argoproj.io/" in rendered) == (gitops == "argocd")
    checked = runner.invoke(main, ["check", "out/h20-burnin"])
    assert checked.exit_code == 0 and "no problems" in checked.output, checked.output
    shown = runner.invoke(main, ["plan", "--format", "json", "sites/h20-burnin.yaml"])
    assert shown.exit_code == 0, shown.output
    (site_plan,) = json.loads(shown.output)
    assert site_plan["fits"] is True


def test_the_window_counts_its_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = h20_site(EXAMPLE.read_text()).replace("name: h20-3e-trainer", "name: h20-burnin")
    assert WINDOW in text
    _project(tmp_path, "h20-burnin", text)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    refused = runner.invoke(main, ["render"])  # the example's window held it; not with burn-in
    assert refused.exit_code == 2 and "error[NVC313]" in refused.output
    assert "single-node/burn-in 40.0 GPU-h" in refused.output
    text = h20_site(without_packing(EXAMPLE.read_text()))
    text = text.replace("name: h20-3e-trainer", "name: h20-burnin").replace(WINDOW, ROOMY)
    _project(tmp_path, "h20-burnin", text)
    with_it = json.loads(runner.invoke(main, ["plan", "--format", "json"]).output)[0]
    _project(tmp_path, "h20-burnin", text.replace("burn-in, ", "", 1))
    without = json.loads(runner.invoke(main, ["plan", "--format", "json"]).output)[0]
    step = next(s for s in with_it["steps"] if s["step"].startswith("01-single-node"))
    assert any("burn-in" in r for r in step["runs"]) or "burn-in" in json.dumps(step)
    # one burn-in run a node and round: at least its 735 s more than the site without it
    assert with_it["expected_ms"] - without["expected_ms"] >= 735_000


FAKE_DCGMI = """#!/bin/sh
# A stand-in for dcgmi in this test: it prints its arguments, then a targeted stress JSON
# in which GPU 1 stays under its target, and exits as dcgmi does on a failed test.
echo "args: $*"
cat "$0.json"
echo
exit 226
"""
FAKE_SMI = """#!/bin/sh
echo "0, GPU-8c1e3a7d-0000-4000-8000-000000000000"
echo "1, GPU-8c1e3a7d-0000-4000-8000-000000000001"
"""


def test_the_script_runs_dcgm_in_its_pod_and_collect_reads_its_output(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None or shutil.which("timeout") is None or shutil.which("sed") is None:
        pytest.skip("needs bash, timeout and sed")
    from nvcregen.kinds.burnin.logs import read_burnin

    site, unit = burnin_unit(h20_site())
    script = node_script(site, unit)
    results = [
        {"gpu_ids": "0", "status": "PASS", "info": ["GPU 0 relative stress level\t20900"]},
        {
            "gpu_ids": "1",
            "status": "FAIL",
            "warnings": [
                "Max stress level of 12000.0 did not reach desired stress level of 20850.0"
                " for GPU 1"
            ],
        },
    ]
    test = {"name": "targeted_stress", "results": results}
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Stress", "tests": [test]}]}}
    for name, body in (("dcgmi", FAKE_DCGMI), ("nvidia-smi", FAKE_SMI), ("nv-hostengine", "")):
        tool = tmp_path / name
        tool.write_text(body or "#!/bin/sh\nexit 0\n")
        tool.chmod(0o755)
    (tmp_path / "dcgmi.json").write_text(json.dumps(doc))
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "NODE_NAME": "node-a", "POD_NAME": "burn-x7k2p"}
    done = subprocess.run(
        [bash, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 226, done.stdout + done.stderr  # DCGM's failure is the run's
    lines = done.stdout.splitlines()
    assert lines[0].startswith("@@nvcregen-burnin begin node=node-a pod=burn-x7k2p start=")
    assert lines[1] == "@@nvcregen-gpu index=0 uuid=GPU-8c1e3a7d-0000-4000-8000-000000000000"
    assert lines[3] == (
        "args: diag --host 127.0.0.1 --run targeted_stress -p targeted_stress.is_allowed=true;"
        "targeted_stress.test_duration=600;targeted_stress.use_dgemm=false;"
        "targeted_stress.target_perf_min_ratio=0.95;targeted_stress.target_stress=20850"
        " --json --verbose"
    )
    assert lines[-1].startswith("nvcregen: dcgmi diag --run targeted_stress exit=226 seconds=")
    base = {"path": "logs/x.log", "nodes": ("node-a",)}
    record = read_burnin(done.stdout, base, unit, names_itself=True)
    assert record.status == "failed" and record.hosts == ("node-a",)
    assert record.errors[0] == (
        "node-a NVC768: GPU 1 (GPU-8c1e3a7d-0000-4000-8000-000000000001): 12000 GFLOPS (best),"
        " under the floor 19807.5 GFLOPS"
    )  # then GPUs 2-7 of the node's 8, which this stand-in never named
    assert record.errors[1:] == tuple(
        f"node-a NVC767: GPU {n}: DCGM names it nowhere" for n in range(2, 8)
    )
