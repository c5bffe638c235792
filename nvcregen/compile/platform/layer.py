"""The platform layer: NVCRE's namespace, the collector's read-only RBAC, NVCRE, Trainer.

NVCRE itself is either rendered here from a pinned chart archive (`nvcre.chart.archive`,
its CRDs going to the "crds" component) or referenced from its OCI registry through the
site's GitOps engine (Flux OCIRepository + HelmRelease, or an Argo CD Application).
Kubeflow Trainer is always a reference, and only when the site manages it; JobSet comes
with Trainer's chart (`jobset.install`) only when the site manages JobSet too. In trainer
mode (`readiness.engine: trainer`) NVCRE is not installed and the collector may also
read TrainJobs and Jobs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from nvcregen.compile.platform.helm import HelmError, HelmRenderer, no_renderer, verify_archive
from nvcregen.compile.platform.helmref import ChartRelease, reference_notes, reference_objects
from nvcregen.core import codes, kube
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.labels import REQUIRES
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.core.nvcre import NVCRE_GROUP
from nvcregen.engineapi.registry import gitops_of, readiness_of
from nvcregen.plan.images import mirrored, mirrored_chart
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

COMPONENT = "platform"
CRDS = "crds"
COLLECTOR = "nvcregen-collector"
NVCRE_RELEASE = "nvcre"
COLLECTED = (
    "certifications",
    "workflows",
    "jobs",
    "workloadruns",
    "bandwidthmeasurements",
    "goodputmeasurements",
    "reportexports",
    "logprofiles",
)
READ = ["get", "list", "watch"]
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_API = f"{RBAC_GROUP}/v1"
# nvcrectl setup (NVCRE docs/cli-reference/setup.md): chart, release and namespace.
TRAINER_REF = "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
# The controller images of the Trainer chart and its JobSet subchart, as their values
# split them (catalog/charts/kubeflow-trainer-2.2.1.yaml).
TRAINER_IMAGE = ("ghcr.io", "kubeflow/trainer/trainer-controller-manager")
JOBSET_IMAGE = ("registry.k8s.io", "jobset/jobset")
TRAINER_RELEASE = "kubeflow-trainer"
TRAINER_NAMESPACE = "kubeflow-system"
# The Trainer chart's values key for its JobSet subchart: `condition: jobset.install` in
# schemas/upstream/kubeflow-trainer/v2.2.1/chart/Chart.yaml.
JOBSET_INSTALL = "install"
JOBSET_PROMETHEUS = "prometheus"
JOBSET_CRD = "jobsets.jobset.x-k8s.io"
JOBSET_API = "jobset.x-k8s.io/v1alpha2/JobSet"
# Trainer 2.2.1's chart README says `Kubernetes >= 1.29` (its Chart.yaml has no kubeVersion).
TRAINER_MIN_KUBE = (1, 29)
# JobSet 0.11.0 supports "the last 3 Kubernetes minor versions" of its k8s.io/api 0.35.
JOBSET_KUBE = ((1, 33), (1, 35))


def platform_manifests(
    site: Site, renderer: HelmRenderer | None, *, base_dir: Path | None = None
) -> list[Manifest]:
    """Build the platform layer of a site.

    Args:
        site: The parsed site.
        renderer: Renders `nvcre.chart.archive` when the site names one; None when no
            renderer is available (an error only if an archive must be rendered).
        base_dir: The folder `nvcre.chart.archive` is relative to: the site file's folder.

    Raises:
        HelmError: NVC401/NVC402/NVC403/NVC405 when the chart archive cannot be used;
            `HelmError.diagnostic(doc)` turns it into a diagnostic at the site's line.

    """
    nvcre = site.spec.nvcre
    if not nvcre.managed:  # another site of the cluster installs them (NVC690)
        return [*collector_rbac(site), *trainer_reference(site)]
    manifests = [readiness_namespace(site), *collector_rbac(site)]
    if not readiness_of(site).installs_nvcre:
        pass  # the plan runs as Trainer objects and Jobs: no NVCRE to install
    elif nvcre.chart.archive is not None:
        manifests += rendered_nvcre(site, renderer, base_dir or Path.cwd())
    else:
        manifests += nvcre_reference(site)
    return manifests + trainer_reference(site)


def namespace(name: str, source: str) -> Manifest:
    """A core v1 Namespace."""
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    return Manifest(obj, COMPONENT, source)


def readiness_namespace(site: Site) -> Manifest:
    """The namespace the runs use, naming the APIs they need that the site installs none of.

    Every TrainJob becomes a JobSet: with `dependencies.jobset.managed: false` JobSet must
    already be installed, a precondition `nvcregen check --server` tests (`REQUIRES`).
    """
    manifest = namespace(site.spec.nvcre.namespace, "/spec/nvcre/namespace")
    if site.spec.dependencies.jobset.managed:
        return manifest
    metadata = {**manifest.obj["metadata"], "annotations": {REQUIRES: JOBSET_API}}
    note = f"JobSet is a precondition (dependencies.jobset.managed: false): {JOBSET_API}"
    return replace(manifest, obj={**manifest.obj, "metadata": metadata}, notes=(note,))


def collector_rbac(site: Site) -> list[Manifest]:
    """Read-only access for `nvcregen collect`: NVCRE results, and logs in NVCRE's namespace.

    A ServiceAccount `nvcregen-collector`; a ClusterRole `nvcregen-<site>-collector` (per
    site: two sites may share a cluster) reading NVCRE's kinds and a Role reading
    ConfigMaps, Pods, Pod logs and TrainJobs (and trainer mode's Jobs) in NVCRE's
    namespace, each with its binding. With
    `nvcre.managed: false` only the per-site ClusterRole and its binding: the account and
    the Role are the installing site's.
    """
    ns = site.spec.nvcre.namespace
    shared = not site.spec.nvcre.managed  # the account and its Role are the installing site's
    cluster_rules = [{"apiGroups": [NVCRE_GROUP], "resources": list(COLLECTED), "verbs": READ}]
    namespace_rules = [
        {"apiGroups": [""], "resources": ["configmaps", "pods"], "verbs": READ},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
        # trainer mode's runs, and the TrainJobs NVCRE makes (node-health logs:
        # engines/readiness/nvcre/collect.py)
        {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"], "verbs": READ},
    ]
    if readiness_of(site).writes_runs:  # the DCGM and node-health runs are Jobs
        namespace_rules += [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": READ}]
    cluster_name = f"nvcregen-{site.metadata.name}-collector"  # cluster-scoped: per site
    objects: list[Obj] = [
        *_role_and_binding("ClusterRole", None, cluster_rules, ns, cluster_name),
    ]
    if not shared:
        objects[:0] = [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(COLLECTOR, ns)}
        ]
        objects += _role_and_binding("Role", ns, namespace_rules, ns, COLLECTOR)
    return [Manifest(obj, COMPONENT, "/spec/nvcre/namespace") for obj in objects]


def _role_and_binding(
    kind: str, ns: str | None, rules: list[Obj], subject_ns: str, name: str
) -> tuple[Obj, Obj]:
    """A (Cluster)Role `name` and its (Cluster)RoleBinding to the collector's account."""
    role = {"apiVersion": RBAC_API, "kind": kind, "metadata": _meta(name, ns), "rules": rules}
    binding = {
        "apiVersion": RBAC_API,
        "kind": f"{kind}Binding",
        "metadata": _meta(name, ns),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": COLLECTOR, "namespace": subject_ns}],
    }
    return role, binding


def nvcre_values(site: Site) -> Obj:
    """The NVCRE chart values a site implies (chart keys per NVCRE 0.7.0's values.yaml)."""
    nvcre = site.spec.nvcre
    image: Obj = {"repository": mirrored(nvcre.image.repository, site.spec.images.mirror)}
    if nvcre.image.digest:
        image["digest"] = nvcre.image.digest
    # The chart's ServiceMonitor skips TLS verification and cannot be told otherwise;
    # the monitoring layer generates one that verifies (nvcregen.compile.monitoring.layer).
    monitor: Obj = {"enabled": False}
    values: Obj = {
        "nameOverride": NVCRE_RELEASE,
        "manager": {"image": image},
        "metrics": {"serviceMonitor": monitor},
    }
    if nvcre.pdb:
        values["pdb"] = {"enabled": True, "minAvailable": 1}
    return values


def nvcre_reference(site: Site) -> list[Manifest]:
    """NVCRE installed by the GitOps engine from its OCI registry."""
    chart = site.spec.nvcre.chart
    release = ChartRelease(
        NVCRE_RELEASE,
        mirrored_chart(chart.ref, site.spec.images.mirror),
        chart.version,
        chart.digest,
        site.spec.nvcre.namespace,
        nvcre_values(site),
    )
    notes = reference_notes(release, gitops_of(site))
    return [
        Manifest(obj, COMPONENT, "/spec/nvcre/chart", notes=notes)
        for obj in _references(site, release)
    ]


def rendered_nvcre(site: Site, renderer: HelmRenderer | None, base_dir: Path) -> list[Manifest]:
    """NVCRE rendered here from the pinned chart archive; its CRDs go to "crds"."""
    chart = site.spec.nvcre.chart
    assert chart.archive is not None
    path = base_dir / chart.archive
    digest = verify_archive(path, chart.sha256, chart.archive)
    if renderer is None:
        raise no_renderer()
    ns = site.spec.nvcre.namespace
    rendered = renderer.render(
        path, NVCRE_RELEASE, ns, nvcre_values(site), site.spec.kubernetes.version
    )
    crds = [c for c in rendered.crds if _keep_crd(site, c)]
    scopes = _crd_scopes(crds)
    note = (f"rendered from {Path(chart.archive).name} ({digest})",)
    manifests = [
        Manifest(_with_namespace(obj, ns, scopes), COMPONENT, "/spec/nvcre/chart", notes=note)
        for obj in rendered.manifests
    ]
    manifests += [Manifest(c, CRDS, "/spec/nvcre/chart", notes=note) for c in crds]
    return manifests


def trainer_values(site: Site) -> Obj:
    """Trainer chart values: its JobSet subchart only when the site manages JobSet.

    A managed JobSet exports no metrics to the Prometheus Operator (see below).

    The controller images are written out when the site pins them or has a mirror:
    `<registry>` behind the mirror, the tag `v<version>` with the digest appended (the
    charts join `registry/repository:tag`, so `tag@digest` pins).
    """
    deps = site.spec.dependencies
    jobset: Obj = {JOBSET_INSTALL: deps.jobset.managed}
    if deps.jobset.managed:
        # The JobSet chart's `prometheus.enable` (default true) renders a ServiceMonitor,
        # which fails to apply where the Prometheus Operator's CRDs are not installed;
        # nothing nvcregen generates reads JobSet's metrics.
        jobset[JOBSET_PROMETHEUS] = {"enable": False}
    values: Obj = {"jobset": jobset}
    mirror = site.spec.images.mirror
    if mirror or deps.trainer.image_digest:
        values["image"] = _image(
            TRAINER_IMAGE, deps.trainer.version, deps.trainer.image_digest, mirror
        )
    if deps.jobset.managed and (mirror or deps.jobset.image_digest):
        jobset["image"] = _image(
            JOBSET_IMAGE, deps.jobset.version, deps.jobset.image_digest, mirror
        )
    return values


def _image(image: tuple[str, str], version: str, digest: str | None, mirror: str | None) -> Obj:
    registry, repository = image
    tag = f"v{version}" + (f"@{digest}" if digest else "")
    return {"registry": mirrored(registry, mirror), "repository": repository, "tag": tag}


def trainer_reference(site: Site) -> list[Manifest]:
    """Kubeflow Trainer (v2.2.1) from its OCI chart, and its namespace; none if unmanaged."""
    trainer = site.spec.dependencies.trainer
    if not trainer.managed:
        return []
    release = ChartRelease(
        TRAINER_RELEASE,
        mirrored_chart(TRAINER_REF, site.spec.images.mirror),
        trainer.version,
        trainer.chart_digest,
        TRAINER_NAMESPACE,
        trainer_values(site),
    )
    source = "/spec/dependencies/trainer"
    notes = reference_notes(release, gitops_of(site))
    objects = _references(site, release)
    return [
        namespace(TRAINER_NAMESPACE, source),
        *(Manifest(obj, COMPONENT, source, notes=notes) for obj in objects),
    ]


def check_platform(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC404 warnings: the site's Kubernetes is outside what a managed dependency declares.

    NVC375 (error): JobSet managed without Trainer, whose chart bundles it.
    """
    version = site.spec.kubernetes.version
    minor = _minor(version)
    deps = site.spec.dependencies
    found: list[str] = []
    if deps.trainer.managed and minor < TRAINER_MIN_KUBE:
        found.append(
            f"Kubeflow Trainer {deps.trainer.version} declares Kubernetes >= "
            f"{_show(TRAINER_MIN_KUBE)} (its chart README); this site runs {version}"
        )
    low, high = JOBSET_KUBE
    if deps.trainer.managed and deps.jobset.managed and not low <= minor <= high:
        found.append(
            f"JobSet {deps.jobset.version} supports the last three Kubernetes minors of its "
            f"k8s.io/api 0.35, {_show(low)} to {_show(high)}; this site runs {version}"
        )
    where = "/spec/kubernetes/version"
    hint = "a warning only: test on a cluster of this version before relying on it"
    return [
        Diagnostic(doc.span(where), Severity.WARNING, codes.NVC404.code, message, where, hint)
        for message in found
    ] + _jobset_problems(site, doc)


def _jobset_problems(site: Site, doc: Document) -> list[Diagnostic]:
    """NVC375: a managed JobSet comes with Trainer's chart, so Trainer must be managed too."""
    deps = site.spec.dependencies
    if not deps.jobset.managed or deps.trainer.managed:
        return []
    where = "/spec/dependencies/jobset/managed"
    message = (
        "JobSet is installed as the bundled subchart of Trainer's chart (jobset.install), "
        "but this site does not install Trainer"
    )
    hint = (
        "set dependencies.trainer.managed: true, or jobset.managed: false and install "
        "JobSet yourself (`nvcregen check --server` then tests it is served)"
    )
    return [Diagnostic(doc.span(where), Severity.ERROR, codes.NVC375.code, message, where, hint)]


def _references(site: Site, release: ChartRelease) -> list[Obj]:
    """Flux or Argo CD objects for a release; Argo CD Applications are `<site>-<release>`.

    They join the site's AppProject (named after the site, generated with the GitOps
    layer when `gitops.repoURL` is set), else Argo CD's `default` project.
    """
    gitops = site.spec.gitops
    project = site.metadata.name if gitops.repo_url else "default"
    app_name = f"{site.metadata.name}-{release.name}"
    return reference_objects(release, gitops_of(site), app_name=app_name, project=project)


def _meta(name: str, ns: str | None = None) -> Obj:
    return {"name": name, "namespace": ns} if ns else {"name": name}


def _keep_crd(site: Site, crd: Obj) -> bool:
    """JobSet's CRD is shared: never emitted unless the site manages JobSet."""
    name = (crd.get("metadata") or {}).get("name")
    return name != JOBSET_CRD or site.spec.dependencies.jobset.managed


def _crd_scopes(crds: list[Obj]) -> dict[str, str]:
    scopes: dict[str, str] = {}
    for crd in crds:
        spec: dict[str, Any] = crd.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind")
        if isinstance(kind, str):
            scopes[f"{spec.get('group', '')}/{kind}"] = str(spec.get("scope", ""))
    return scopes


def _with_namespace(obj: Obj, ns: str, scopes: dict[str, str]) -> Obj:
    """Give a namespaced object without a namespace the release's, as Helm would."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("namespace"):
        return obj
    group = kube.api_group(str(obj.get("apiVersion", "")))
    if not kube.is_namespaced(group, str(obj.get("kind", "")), crd_scopes=scopes):
        return obj
    return {**obj, "metadata": {**metadata, "namespace": ns}}


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _show(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


__all__ = [
    "COMPONENT",
    "CRDS",
    "HelmError",
    "check_platform",
    "nvcre_values",
    "platform_manifests",
    "trainer_values",
]
