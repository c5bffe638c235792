"""No module outside `nvcregen/engines/` compares an engine's name (issue 35, item 3).

Engines are found through `engineapi.registry.readiness_of(site)` / `gitops_of(site)` and
read by their traits; `site.spec.gitops.engine == "flux"`, `engine != "nvcre"`, a name
passed as an engine (`_fits("argocd", ...)`) or a list of the names is the old dispatch.
Other meanings of the words stay: a TrainJob's `trainer` block, the `nvcre` Helm release
and namespace, Argo CD's `argocd` namespace and label, `spec.nvcre` of a site's data.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

from nvcregen.engineapi.names import DEFAULT_GITOPS_NAME, GITOPS_NAMES
from nvcregen.engineapi.registry import GITOPS, READINESS
from nvcregen.spec.v1alpha1 import GitOps, Readiness

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "nvcregen"
ENGINES = PACKAGE / "engines"
ENGINEAPI = PACKAGE / "engineapi"  # the seam: the names, the registry by module name
# the site language declares the names (`Literal[...]`); the registry must match it
LANGUAGE = PACKAGE / "spec" / "v1alpha1.py"
NAME = r"""["'](argocd|flux|nvcre|trainer)["']"""
DISPATCH = re.compile(
    rf"\bengine\b.*[!=]= *{NAME}"  # site.spec.gitops.engine == "flux", unit.engine == 'argocd'
    rf"|{NAME} *[!=]= *\S*\bengine\b"  # "nvcre" == engine
    rf"|\bengine\b.*\bin\b.*{NAME}"  # engine in ("argocd", ...)
    rf"""|\.get\(["']engine["'], *{NAME}\)"""  # a site's data read with a default engine
    # a name passed as an engine: _fits("flux", groups, facts), not a key: .get("trainer", {})
    rf"|\b(?!get\b|setdefault\b|pop\b)\w+\({NAME}, "
    rf"|{NAME}: *\w+\(\)"  # a registry of one's own: {"flux": Flux()}
    r"|\[[\"'](argocd|nvcre)[\"'], *[\"'](flux|trainer)[\"']\]"  # the names, listed
)


def dispatching() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINES in path.parents or ENGINEAPI in path.parents:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        hits = [
            f"{n}: {t.strip()}"
            for n, t in enumerate(lines, 1)
            if DISPATCH.search(t) and not (path == LANGUAGE and "Literal[" in t)
        ]
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    return found


def test_no_module_outside_the_engines_compares_an_engines_name() -> None:
    found = dispatching()
    assert not found, "ask engineapi.registry (readiness_of, gitops_of) instead:\n" + "\n".join(
        f"{f}:{h}" for f, hits in found.items() for h in hits
    )


def test_the_pattern_finds_each_old_form() -> None:
    for line in (
        'if site.spec.gitops.engine == "flux":',
        'if site.spec.readiness.engine != "trainer":',
        "f\" {'Argo CD' if unit.engine == 'argocd' else 'Flux'} would fail it\"",
        '    nvcre = site.spec.readiness.engine == "nvcre"',
        'if "argocd" == engine:',
        'if engine in ("argocd", "flux"):',
        'if data["spec"]["readiness"].get("engine", "nvcre") == "nvcre":',
        'if owner is None or _fits("flux", groups, facts):',
        'ENGINES = {"flux": Flux(), "argocd": ArgoCd()}',
        'type=click.Choice(["argocd", "flux"]),',
        'engine: Literal["argocd", "flux"] = "argocd"',
    ):
        assert DISPATCH.search(line), line
    for line in (
        'trainer = spec.get("trainer") or {}',
        'ARGOCD_NAMESPACE = "argocd"',
        'NVCRE_RELEASE = "nvcre"',
        'if kind == "HelmRelease" and group == "helm" and name == "nvcre":',
        'for name in ("trainer", "jobset"):',
        'trainer = spec.get("trainer", {})',
        'spec.setdefault("nvcre", {})["managed"] = False',
        "if gitops_of(site).kustomizations:",
        "if not readiness_of(site).installs_nvcre:",
    ):
        assert not DISPATCH.search(line), line


def test_the_registry_holds_exactly_the_engines_a_site_may_name() -> None:
    gitops = typing.get_args(GitOps.model_fields["engine"].annotation)
    readiness = typing.get_args(Readiness.model_fields["engine"].annotation)
    assert sorted(GITOPS) == sorted(gitops)
    assert sorted(READINESS) == sorted(readiness)
    assert all(name == engine.name for name, engine in GITOPS.items())
    assert all(name == engine.name for name, engine in READINESS.items())
    # the names the command line offers before any engine is imported (`engineapi/names.py`)
    assert sorted(GITOPS_NAMES) == sorted(GITOPS) and DEFAULT_GITOPS_NAME in GITOPS
