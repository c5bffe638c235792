"""`nvcregen init`: a commented starter site per catalog model that validates as written."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nvcregen.catalog.load import load_catalog
from nvcregen.cli import main
from nvcregen.core.units import parse_duration
from nvcregen.emit.canonical import load_yaml_plain
from nvcregen.plan.budget import plan_budget
from nvcregen.plan.resolve import plan
from nvcregen.scaffold.starter import HEADROOM, Starter, nice_ceiling
from nvcregen.scaffold.writer import flow_list, yaml_scalar
from nvcregen.spec.v1alpha1 import Site

CATALOG = load_catalog()
MODELS = sorted(h.model for h in CATALOG.hardware.values())
SCHEMA_LINE = "# yaml-language-server: $schema=../schemas/site.v1alpha1.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def site_of(path: Path) -> Site:
    data = load_yaml_plain(path.read_text(encoding="utf-8"))
    return Site.model_validate(data)


@pytest.mark.parametrize("model", MODELS)
def test_every_catalog_model_starts_a_site_that_validates(project: Path, model: str) -> None:
    written = run("init", "--model", model, "--name", "starter")
    assert written.exit_code == 0, written.output
    path = project / "sites" / "starter.yaml"
    assert "wrote sites/starter.yaml" in written.output
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == SCHEMA_LINE
    checked = run("validate")
    assert checked.exit_code == 0, checked.output
    assert ": error[" not in checked.output

    hardware = CATALOG.find_hardware(model)
    assert hardware is not None
    site = site_of(path)
    pool = site.spec.node_pools[0]
    assert pool.model == hardware.model
    assert pool.gpus_per_node == hardware.gpus_per_node
    assert pool.product_labels == hardware.product_labels
    assert pool.node_count == 2
    assert [s.scope for s in site.spec.readiness.stages] == ["intra-node", "inter-node"]
    if hardware.typical_nics is not None:
        assert pool.nics is not None
        assert pool.nics.count == hardware.typical_nics.count
        assert pool.nics.speed == hardware.typical_nics.speed
    else:
        assert pool.nics is None
        assert site.spec.readiness.stages[1].tests == ["nccl-all-reduce-tcp"]


@pytest.mark.parametrize("model", ["H20-3e", "L20", "RTX PRO 6000"])
def test_the_window_fits_the_plan_with_bounded_headroom(project: Path, model: str) -> None:
    assert run("init", "--model", model, "--name", "w").exit_code == 0
    site = site_of(project / "sites" / "w.yaml")
    budget = plan_budget(site, plan(site, CATALOG))
    window = site.spec.readiness.window
    assert budget.gpu_hours > 0
    assert budget.gpu_hours <= window.gpu_hours <= budget.gpu_hours * HEADROOM * 1.1 + 1
    deadline_h = parse_duration(window.deadline) / 3_600_000
    assert budget.wall_hours <= deadline_h <= math.ceil(budget.wall_hours * HEADROOM)
    text = (project / "sites" / "w.yaml").read_text(encoding="utf-8")
    assert f"{budget.worst_wall} and {budget.worst_gpu_hours} GPU-hours" in text


def test_h20_3e_starter_carries_the_catalog_facts_and_comments(project: Path) -> None:
    assert run("init", "--model", "h20-3e", "--name", "lab").exit_code == 0
    text = (project / "sites" / "lab.yaml").read_text(encoding="utf-8")
    site = site_of(project / "sites" / "lab.yaml")
    pool = site.spec.node_pools[0]
    assert pool.selector == {"nvidia.com/gpu.product": "NVIDIA-H20-3e"}
    assert pool.nics is not None
    assert (pool.nics.count, pool.nics.fabric, pool.nics.speed) == (8, "roce", "200Gb/s")
    assert pool.topology is not None
    assert pool.topology.nvlink == "NV18"
    stages = site.spec.readiness.stages
    assert stages[0].tests == [
        "dcgm-l1",
        "dcgm-l2",
        "nccl-all-reduce",
        "nccl-all-gather",
        "nccl-alltoall",
    ]
    assert stages[1].tests[-1] == "nccl-all-reduce-tcp"
    assert stages[1].nodes_per_job == 2
    # label_certain is false for H20-3e: the starter says so where the labels are.
    assert "Not confirmed for H20-3e" in text
    # Baselines are shown as evidence, never as thresholds.
    assert "h20-3e-2node-roce-all-reduce" in text
    assert site.spec.thresholds == []
    assert "# resourceName: rdma/hca" in text


def test_named_nodes_flux_and_repo(project: Path) -> None:
    result = run(
        "init",
        "--model",
        "L20",
        "--name",
        "pool-b",
        "--nodes",
        "gpu-1, gpu-2,gpu-3",
        "--engine",
        "flux",
        "--repo-url",
        "https://git.example.com/gpu/readiness.git",
        "--kubernetes",
        "1.31",
    )
    assert result.exit_code == 0, result.output
    site = site_of(project / "sites" / "pool-b.yaml")
    pool = site.spec.node_pools[0]
    assert pool.nodes == ["gpu-1", "gpu-2", "gpu-3"]
    assert pool.selector is None
    assert site.spec.readiness.window.max_concurrent_jobs == 3
    assert site.spec.gitops.engine == "flux"
    assert site.spec.gitops.repo_url == "https://git.example.com/gpu/readiness.git"
    assert site.spec.kubernetes.version == "1.31"
    assert run("validate").exit_code == 0


def test_halving_the_nics_after_init_failed_the_window_init_sizes_for_them(
    project: Path,
) -> None:
    """Issue 19: `init` had no NIC options; 4 NICs where it wrote 8 broke the window."""
    assert run("init", "--model", "H20-3e", "--name", "lab", "--out", "eight.yaml").exit_code == 0
    eight = (project / "eight.yaml").read_text(encoding="utf-8")
    halved = eight.replace("        count: 8\n", "        count: 4\n")
    assert halved != eight
    (project / "halved.yaml").write_text(halved, encoding="utf-8")
    refused = run("validate", "halved.yaml")
    assert refused.exit_code == 2 and "error[NVC313]" in refused.output  # the failure reported

    made = run(
        "init", "--model", "H20-3e", "--name", "lab", "--nics", "4", "--nic-speed", "200Gb/s",
        "--fabric", "roce",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    site = site_of(project / "sites" / "lab.yaml")
    nics = site.spec.node_pools[0].nics
    assert nics is not None
    assert (nics.count, nics.speed, nics.fabric) == (4, "200Gb/s", "roce")
    checked = run("validate", "sites/lab.yaml")
    assert checked.exit_code == 0, checked.output
    # the window is sized to the slower pairs: longer than the 8-NIC starter's
    window, eight_window = site.spec.readiness.window, site_of(project / "eight.yaml").spec
    assert parse_duration(window.deadline) > parse_duration(eight_window.readiness.window.deadline)
    budget = plan_budget(site, plan(site, CATALOG))
    deadline_h = parse_duration(window.deadline) / 3_600_000
    assert budget.wall_hours <= deadline_h <= math.ceil(budget.wall_hours * HEADROOM)
    text = (project / "sites" / "lab.yaml").read_text(encoding="utf-8")
    assert "# As asked (--nics, --nic-speed): 4 x 200Gb/s (roce)" in text
    assert "# hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3]" in text


def test_nic_speed_and_fabric_size_the_window(project: Path) -> None:
    """Slower NICs (and InfiniBand instead of RoCE) change the worst case init sizes for."""
    assert run("init", "--model", "H100", "--name", "fast", "--nic-speed", "400Gb/s").exit_code == 0
    assert run("init", "--model", "H100", "--name", "slow", "--nic-speed", "100Gb/s").exit_code == 0
    fast, slow = (site_of(project / "sites" / f"{n}.yaml") for n in ("fast", "slow"))
    assert slow.spec.node_pools[0].nics is not None
    assert slow.spec.node_pools[0].nics.speed == "100Gb/s"
    fast_h = plan_budget(fast, plan(fast, CATALOG)).wall_hours
    slow_h = plan_budget(slow, plan(slow, CATALOG)).wall_hours
    assert slow_h > fast_h
    assert parse_duration(slow.spec.readiness.window.deadline) >= math.ceil(slow_h) * 3_600_000
    assert run("validate").exit_code == 0
    # a model without typical NICs takes them whole from the options
    whole = run(
        "init", "--model", "RTX PRO 6000", "--name", "rtx", "--nics", "2", "--nic-speed",
        "100Gb/s", "--fabric", "roce",
    )  # fmt: skip
    assert whole.exit_code == 0, whole.output
    rtx = site_of(project / "sites" / "rtx.yaml").spec.node_pools[0].nics
    assert rtx is not None and (rtx.count, rtx.speed, rtx.fabric) == (2, "100Gb/s", "roce")
    assert run("validate", "sites/rtx.yaml").exit_code == 0


def test_one_node_has_no_inter_node_stage(project: Path) -> None:
    assert run("init", "--model", "H100", "--name", "solo", "--nodes", "n1").exit_code == 0
    text = (project / "sites" / "solo.yaml").read_text(encoding="utf-8")
    site = site_of(project / "sites" / "solo.yaml")
    assert [s.scope for s in site.spec.readiness.stages] == ["intra-node"]
    assert "Add an inter-node stage" in text
    assert run("validate").exit_code == 0


def test_tcp_fabric_keeps_fabric_collectives_inside_nodes(project: Path) -> None:
    assert run("init", "--model", "H100", "--name", "t", "--fabric", "tcp").exit_code == 0
    site = site_of(project / "sites" / "t.yaml")
    assert site.spec.readiness.stages[1].tests == ["nccl-all-reduce-tcp"]
    checked = run("validate")
    assert checked.exit_code == 0
    assert "NVC318" not in checked.output  # no RDMA collective silently over TCP


def test_stdout_and_another_folder(project: Path) -> None:
    shown = run("init", "--model", "B200", "--name", "b", "--out", "-")
    assert shown.exit_code == 0
    assert shown.stdout.startswith(SCHEMA_LINE + "\n")
    assert not (project / "sites").exists()
    nested = run("init", "--model", "B200", "--name", "b", "--out", "fleet/eu/b.yaml")
    assert nested.exit_code == 0
    text = (project / "fleet" / "eu" / "b.yaml").read_text(encoding="utf-8")
    assert (
        text.splitlines()[0] == "# yaml-language-server: $schema=../../schemas/site.v1alpha1.json"
    )
    assert run("validate", "fleet/eu/b.yaml").exit_code == 0


def test_never_overwrites(project: Path) -> None:
    (project / "sites").mkdir()
    existing = project / "sites" / "lab.yaml"
    existing.write_text("# mine\n", encoding="utf-8")
    result = run("init", "--model", "H20", "--name", "lab")
    assert result.exit_code == 2
    assert "sites/lab.yaml already exists" in result.output
    assert existing.read_text(encoding="utf-8") == "# mine\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "H21", "--name", "x"], "unknown GPU model 'H21'; did you mean 'H20'?"),
        (["--model", "H20", "--name", "Lab_1"], "site name 'Lab_1' is not a DNS label"),
        (["--model", "H20", "--name", "x", "--kubernetes", "1.24"], "not a minor version"),
        (["--model", "H20", "--name", "x", "--nodes", "a,a"], "a node is named twice"),
        (["--model", "H20", "--name", "x", "--nodes", " , "], "--nodes names no node"),
        (
            ["--model", "RTX PRO 6000", "--name", "x", "--fabric", "roce"],
            "lists no typical NICs for RTX PRO 6000",
        ),
        (
            ["--model", "RTX PRO 6000", "--name", "x", "--nics", "2"],
            "describe them whole with --nics, --nic-speed and --fabric",
        ),
        (["--model", "H100", "--name", "x", "--nic-speed", "200"], "--nic-speed 200:"),
        (["--model", "H100", "--name", "x", "--nic-speed", "fast"], "--nic-speed fast:"),
        (["--model", "H100", "--name", "x", "--node-count", "100000"], "more than one window"),
    ],
)
def test_refusals(project: Path, args: list[str], message: str) -> None:
    result = run("init", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert not (project / "sites").exists()


def test_nodes_and_node_count_together_is_a_usage_error(project: Path) -> None:
    result = run("init", "--model", "H20", "--name", "x", "--nodes", "a,b", "--node-count", "3")
    assert result.exit_code == 2
    assert "--node-count is for a selector pool" in result.output


def test_starter_of_rejects_unknown_choices() -> None:
    with pytest.raises(Exception, match="unknown fabric 'x'"):
        Starter.of("H20", "x", fabric="x")
    with pytest.raises(Exception, match="unknown GitOps engine 'argo'"):
        Starter.of("H20", "x", engine="argo")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("NVIDIA-H20-3e", "NVIDIA-H20-3e"),
        ("200Gb/s", "200Gb/s"),
        ("nvcr.io/nvidia/pytorch:26.01-py3", "nvcr.io/nvidia/pytorch:26.01-py3"),
        ("RTX PRO 6000", '"RTX PRO 6000"'),
        ("on", '"on"'),
        ("1.30", '"1.30"'),
        ("a: b", '"a: b"'),
        ("x\ny", '"x\\ny"'),
    ],
)
def test_yaml_scalar_reads_back_as_itself(text: str, written: str) -> None:
    assert yaml_scalar(text) == written
    assert load_yaml_plain(f"k: {written}\n") == {"k": text}


def test_flow_list_quotes_colons() -> None:
    assert flow_list(["a", "b:c"]) == '[a, "b:c"]'
    assert load_yaml_plain("k: " + flow_list(["a", "b:c", "no"])) == {"k": ["a", "b:c", "no"]}


@pytest.mark.parametrize(("x", "rounded"), [(0.2, 1), (7.2, 8), (10.0, 10), (176.3, 180)])
def test_nice_ceiling(x: float, rounded: int) -> None:
    assert nice_ceiling(x) == rounded
    assert nice_ceiling(4401.0) == 4500


@pytest.mark.parametrize("model", ["H20-3e", "GB200", "L20"])
def test_commented_examples_are_valid_when_uncommented(project: Path, model: str) -> None:
    assert run("init", "--model", model, "--name", "u").exit_code == 0
    path = project / "sites" / "u.yaml"
    text = path.read_text(encoding="utf-8")
    assert ("# numa: " in text) != ("# topology: " in text)  # under topology, or with it
    for key in ("hcas", "resourceName", "numa", "topology"):
        text = text.replace(f"# {key}: ", f"{key}: ")
    path.write_text(text, encoding="utf-8")
    pool = site_of(path).spec.node_pools[0]
    assert pool.nics is not None
    assert len(pool.nics.hcas) == pool.nics.count
    assert pool.nics.resource_name == "rdma/hca"
    assert pool.topology is not None
    listed = sorted(g for node in pool.topology.numa for g in node)
    assert listed == list(range(pool.gpus_per_node or 0))
    assert len(pool.topology.numa) == 2
    checked = run("validate")
    assert checked.exit_code == 0, checked.output
    assert "NVC312" not in checked.output  # HCAs match the count, resourceName set
    assert "NVC320" not in checked.output  # NUMA groups cover every GPU once
