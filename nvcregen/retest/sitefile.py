"""The retest Site file: the archived run's site, cut down to the pairs that isolate suspects.

Everything but the plan is kept from the site the run was judged against (cluster,
images, NICs, thresholds of the retested tests, the window); the node pools and stages
are replaced: one pool per batch of pairs, named `retest-<n>`, its nodes listed suspect,
cleared, suspect, cleared, ..., so that `nodesPerJob: 2` makes exactly the pairs; one
stage per batch and original stage, running the tests the suspects failed.

The retest runs on the original's cluster, beside it in the same repository, so it
installs nothing the original installs (NVC690): it uses the original's namespace,
collector account and NVCRE (`nvcre.managed: false`), Trainer and JobSet (`managed:
false`), Kueue and its LocalQueue (`kueue.managed: false`, no `clusterQueue` of its
own), and Argo CD's health checks (`gitops.healthChecks: existing`).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Options, compile_source
from nvcregen.chain.sites import SITES_DIR, compile_sites
from nvcregen.core import codes
from nvcregen.core.atomicfile import FileWriteError, write_file
from nvcregen.core.errors import Diagnostic, has_errors
from nvcregen.emit.canonical import dump_yaml, load_yaml_plain
from nvcregen.plan.budget import Budget
from nvcregen.retest.pairs import RetestPlan
from nvcregen.validate.site import load_site

Data = dict[str, Any]
MAX_NAME = 63


class RetestError(Exception):
    """No retest site can be written; `diagnostics` holds the compiler's, if any."""

    def __init__(self, message: str, diagnostics: tuple[Diagnostic, ...] = ()) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class RetestSite:
    """The retest site's name, text and worst-case budget."""

    name: str
    text: str
    budget: Budget


def retest_name(site: str) -> str:
    """`<site>-retest`, cut to a DNS label's 63 characters."""
    suffix = "-retest"
    return site[: MAX_NAME - len(suffix)].rstrip("-") + suffix


def retest_data(original: Data, plan: RetestPlan, pool_of: dict[str, str]) -> Data:
    """The original site's data with the retest's pools, stages and thresholds."""
    data = copy.deepcopy(original)
    spec = data["spec"]
    pools = {p["name"]: p for p in spec["nodePools"]}
    stages = {s["name"]: s for s in spec["readiness"]["stages"]}
    new_pools, new_stages = [], []
    for n, batch in enumerate(plan.batches, 1):
        pool = copy.deepcopy(pools[pool_of[batch.pairs[0].suspect]])
        pool["name"] = f"retest-{n}"
        pool["nodes"] = [node for p in batch.pairs for node in (p.suspect, p.cleared)]
        new_pools.append(pool)
        origins = list(dict.fromkeys(stage for stage, _ in batch.tests))
        for k, stage in enumerate(origins, 1):
            tests = [test for s, test in batch.tests if s == stage]
            label = f"retest{n}" if len(origins) == 1 else f"retest{n}-{k}"
            new_stages.append(_stage(stages[stage], label, pool["name"], tests))
    spec["nodePools"] = new_pools
    spec["readiness"]["stages"] = new_stages
    return finish_retest(data)


def finish_retest(data: Data) -> Data:
    """Make a copy of a site, its pools and stages replaced, a retest site (in place).

    It installs nothing the original installs (`_reuse_platform`), keeps the thresholds of
    the (test, scope) its stages run, takes the retest's name, and its GitOps folder beside
    the original's (never the original's: syncing it would apply the original). It runs
    once: the original's `readiness.periodic` is dropped (it names the original's stages,
    and a retest must not leave CronJobs behind; design note 0021).
    """
    spec = data["spec"]
    spec["readiness"].pop("periodic", None)
    _reuse_platform(spec)
    kept = {
        (t, s.get("scope", "inter-node")) for s in spec["readiness"]["stages"] for t in s["tests"]
    }
    spec["thresholds"] = [
        t for t in spec.get("thresholds") or [] if (t["test"], t["scope"]) in kept
    ]
    name = retest_name(str(data["metadata"]["name"]))
    gitops = spec.get("gitops") or {}
    if gitops.get("path"):
        gitops["path"] = str(gitops["path"]).rstrip("/").rpartition("/")[0] + "/" + name
    data["metadata"]["name"] = name
    return data


def _reuse_platform(spec: Data) -> None:
    """Use what the original site installs on the cluster instead of installing it again.

    The original's LocalQueue serves the retest: Kueue is the original's whether it
    installs it (`managed: true`) or binds a LocalQueue to an existing ClusterQueue; the
    retest names no `clusterQueue`, so it generates no LocalQueue of its own.
    """
    spec.setdefault("nvcre", {})["managed"] = False
    dependencies = spec.setdefault("dependencies", {})
    for name in ("trainer", "jobset"):
        dependencies.setdefault(name, {})["managed"] = False
    if "gangScheduler" not in dependencies:
        kueue = dependencies.setdefault("kueue", {})
        kueue["managed"] = False
        kueue.pop("clusterQueue", None)
        for pin in ("chartDigest", "imageDigest"):  # pins of what it no longer installs
            kueue.pop(pin, None)
    for name in ("trainer", "jobset"):
        for pin in ("chartDigest", "imageDigest"):
            dependencies[name].pop(pin, None)
    spec.setdefault("gitops", {})["healthChecks"] = "existing"


def _stage(original: Data, name: str, pool: str, tests: list[str]) -> Data:
    stage: Data = {"name": name, "scope": "inter-node", "pool": pool, "nodesPerJob": 2}
    stage["tests"] = tests
    for key in ("timeoutPerJob", "pinTransport"):
        if key in original:
            stage[key] = original[key]
    return stage


def compile_retest(data: Data, header: str, root: Path, display: str) -> RetestSite:
    """Write the site text and compile it in memory; refuse it unless it renders.

    Raises:
        RetestError: When the site does not validate, plan or render.

    """
    text = dump_yaml(data, header=header)
    catalog = load_catalog()
    result = compile_source(text.encode(), display, catalog, Options(root=root))
    if result.tree is None or has_errors(result.diagnostics):
        raise RetestError("the retest site does not render", tuple(result.diagnostics))
    loaded = load_site(text.encode(), display, catalog, root=root)
    assert loaded.plan is not None
    return RetestSite(loaded.plan.name, text, loaded.plan.budget)


def budget_of(data: Data, root: Path) -> Budget:
    """The worst-case budget of a site's data (before its header is written).

    Raises:
        RetestError: When the data does not even plan.

    """
    text = dump_yaml(data)
    loaded = load_site(text.encode(), "retest.yaml", load_catalog(), root=root)
    if loaded.plan is None:
        raise RetestError("the retest site does not plan", tuple(loaded.diagnostics))
    return loaded.plan.budget


def budget_line(budget: Budget, data: Data) -> str:
    """The retest's worst case against the window it runs in."""
    readiness = data["spec"]["readiness"]
    window = readiness["window"]
    attempts = f"{readiness.get('rounds', 3)} rounds x (1 + {window.get('retests', 0)} retests)"
    return (
        f"Budget of this retest: worst case {math.ceil(budget.gpu_hours * 10) / 10:g} GPU-hours"
        f" and {math.ceil(budget.wall_hours * 10) / 10:g} h of wall clock ({attempts}, every"
        f" job to its timeout), within the window's {window['gpuHours']} GPU-hours and"
        f" {window['deadline']}."
    )


def write_checked(target: Path, text: str, original: Path, root: Path) -> None:
    """Write the site (never over a file), then compile it beside its project's sites.

    Raises:
        RetestError: When the file exists, or the written site does not validate and
            render with the original and the other sites of its cluster; the file is
            removed again then.

    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_file(target, text, replace=False)  # never over an existing file
    except FileExistsError as exc:
        raise RetestError(f"{target} exists: give another --out, or remove it first") from exc
    except FileWriteError as exc:
        raise RetestError(str(exc)) from exc
    except OSError as exc:  # the folder cannot be made
        raise RetestError(f"cannot make {target.parent}/: {exc.strerror or exc}") from exc
    in_sites = target.resolve().parent == (root / SITES_DIR).resolve()
    # in sites/: every site of the project, as a plain `nvcregen render` compiles them;
    # elsewhere: the retest and the original, with the sites sharing their cluster
    results = compile_sites(root, [] if in_sites else [target, original], Options())
    name = _name_of(text)
    mine = [d for r in results if r.site == name for d in r.diagnostics]
    clashes = [  # the other side of a clash: NVC503 and NVC690 name the site they clash with
        d
        for r in results
        if r.site != name
        for d in r.diagnostics
        if d.code in {codes.NVC503.code, codes.NVC690.code} and name in d.message
    ]
    rendered = any(r.site == name and r.tree is not None for r in results)
    if not rendered or has_errors([*mine, *clashes]):
        target.unlink(missing_ok=True)  # nvcregen wrote it just now
        raise RetestError(
            "the retest site does not render beside the sites of its project; nothing written",
            (*mine, *clashes),
        )


def _name_of(text: str) -> str:
    data = load_yaml_plain(text)
    return str(data["metadata"]["name"]) if isinstance(data, dict) else ""
