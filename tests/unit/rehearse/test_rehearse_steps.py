"""The order a rehearsal applies a rendered tree in, read from the tree (pure)."""

from __future__ import annotations

from nvcregen.plan.facts import PlanFacts
from nvcregen.rehearse.gitopsplay import read_order
from nvcregen.rehearse.steps import skip_reason
from nvcregen.replay.model import TreeObject

Tree = tuple[list[TreeObject], PlanFacts]


def test_argo_cd_applications_in_the_parents_order_then_their_waves(argocd_tree: Tree) -> None:
    objects, facts = argocd_tree
    order = read_order(objects, facts.root)
    assert order.engine == "argocd"
    assert [s.key for s in order.steps] == [
        "h20-3e-trainer-platform#0",  # the platform Application is wave -1 of the parent
        "h20-3e-trainer-queues#0",  # the queues Application wave 0
        *(f"h20-3e-trainer-readiness#{w}" for w in (-1, 0, 1, 2, 3, 4, 5, 6, 7)),
    ]
    runs = {s.key.rpartition("#")[2]: len(s.runs) for s in order.steps if "readiness" in s.key}
    assert runs == {"-1": 0, "0": 0, "1": 10, "2": 10, "3": 10, "4": 4, "5": 4, "6": 4, "7": 0}
    assert all(s.waits for s in order.steps)
    # The readiness waves hold what the tree holds: each run with its prebuilt Workload.
    first = next(s for s in order.steps if s.key.endswith("#1"))
    assert sorted({o.kind for o in first.objects}) == ["Job", "TrainJob", "Workload"]
    assert len(first.objects) == 20
    # argocd-cm's health checks are read, for every kind the site checks.
    assert set(order.health) >= {
        "batch_Job",
        "trainer.kubeflow.org_TrainJob",
        "kueue.x-k8s.io_Workload",
    }


def test_checks_installed_elsewhere_are_nvcregens_own_not_none(argocd_tree: Tree) -> None:
    """Found by review: with `gitops.healthChecks: existing` the tree has no argocd-cm
    checks, and every wave passed at once; the replay takes every kind to be checked."""
    objects, facts = argocd_tree
    without = [o for o in objects if not (o.kind == "ConfigMap" and o.name == "argocd-cm")]
    assert read_order(without, facts.root).health == {}
    installed = read_order(without, facts.root, checks_elsewhere=True).health
    assert installed == read_order(objects, facts.root).health  # the same Lua the tree has
    assert {"batch_Job", "trainer.kubeflow.org_TrainJob"} <= set(installed)


def test_the_platform_layer_keeps_what_runs_without_images(argocd_tree: Tree) -> None:
    objects, facts = argocd_tree
    order = read_order(objects, facts.root)
    platform = order.steps[0]
    kinds = [o.kind for o in platform.objects]
    assert kinds[:3] == ["Namespace"] * 3  # namespaces first
    assert "Application" not in kinds and "ConfigMap" not in kinds
    skipped = dict(order.skipped)
    assert "platform/configmap-argocd-cm.yaml" in skipped
    assert (
        "the rehearsal plays the engine"
        in skipped["platform/application-h20-3e-trainer-kueue.yaml"]
    )
    assert "gitops/application-h20-3e-trainer-readiness.yaml" in skipped


def test_flux_kustomizations_in_depends_on_order(flux_tree: Tree) -> None:
    objects, facts = flux_tree
    order = read_order(objects, facts.root)
    assert order.engine == "flux"
    names = [s.label.removeprefix("Kustomization ") for s in order.steps]
    assert names == [
        "h20-3e-trainer-platform",
        "h20-3e-trainer-queues",
        "h20-3e-trainer-readiness",
        *(f"h20-3e-trainer-readiness-01-single-node-r{r}" for r in (1, 2, 3)),
        *(f"h20-3e-trainer-readiness-02-two-node-r{r}" for r in (1, 2, 3)),
    ]
    assert [len(s.runs) for s in order.steps] == [0, 0, 0, 10, 10, 10, 4, 4, 4]
    # `wait: true` on the platform and each step; the queues and 00-common are not waited on.
    assert [s.waits for s in order.steps] == [True, False, False, *[True] * 6]
    assert all(s.unit is not None and s.unit.kind == "Kustomization" for s in order.steps)


def test_a_tree_without_gitops_objects_goes_wave_by_wave(argocd_tree: Tree) -> None:
    objects, facts = argocd_tree
    bare = [o for o in objects if not o.path.startswith("gitops/")]
    order = read_order(bare, facts.root)
    assert order.engine == "waves"
    waves = [s.key for s in order.steps]
    assert waves == [f"waves#{w}" for w in (-1, 0, 1, 2, 3, 4, 5, 6, 7)]
    assert sum(len(s.runs) for s in order.steps) == 42


def test_skip_reasons_name_what_the_twin_does_instead() -> None:
    def item(api: str, kind: str, name: str = "x") -> TreeObject:
        return TreeObject("f", "f", {"apiVersion": api, "kind": kind, "metadata": {"name": name}})

    assert skip_reason(item("v1", "Namespace")) == ""
    assert skip_reason(item("v1", "ConfigMap", "plan")) == ""
    assert skip_reason(item("kueue.x-k8s.io/v1beta2", "ClusterQueue")) == ""
    assert "CRD" in skip_reason(item("apiextensions.k8s.io/v1", "CustomResourceDefinition"))
    assert "Prometheus" in skip_reason(item("monitoring.coreos.com/v1", "ServiceMonitor"))
    assert "engine" in skip_reason(item("helm.toolkit.fluxcd.io/v2", "HelmRelease"))
    assert "health checks" in skip_reason(item("v1", "ConfigMap", "argocd-cm"))
    # each engine's player says which objects are its own (`skip_reason` of its PLAYER)
    own = "the GitOps engine's own object (the rehearsal plays the engine and its charts)"
    for api, kind in (
        ("argoproj.io/v1alpha1", "Application"),
        ("argoproj.io/v1alpha1", "AppProject"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("source.toolkit.fluxcd.io/v1", "GitRepository"),
        ("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator"),
    ):
        assert skip_reason(item(api, kind)) == own, kind
