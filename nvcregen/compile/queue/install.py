"""Kueue 0.19.2 in the platform layer: its namespace and a pinned chart reference (pure).

Like Trainer, Kueue is installed by the site's GitOps engine from its OCI chart
(`nvcregen.compile.platform.helmref`), pinned by version and, when the site gives it, by the
chart's digest. The chart's `managerConfig.controllerManagerConfigYaml` is replaced by
the Configuration below: Kueue's default (schemas/upstream/kueue/v0.19.2/config/) with
only the two integrations readiness needs and `waitForPodsReady` set from the plan.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.compile.platform.helmref import ChartRelease, reference_notes, reference_objects
from nvcregen.compile.platform.layer import COMPONENT, namespace
from nvcregen.compile.queue.workloads import manages_queues
from nvcregen.core import units
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.emit.canonical import dump_yaml
from nvcregen.engineapi.registry import gitops_of
from nvcregen.plan.images import mirrored, mirrored_chart
from nvcregen.plan.model import TestUnit
from nvcregen.plan.requeue import BACKOFF_BASE_S, BACKOFF_MAX_S, pods_ready_timeout_ms
from nvcregen.spec.v1alpha1 import Site

KUEUE_VERSION = "0.19.2"
KUEUE_REF = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_RELEASE = "kueue"
KUEUE_NAMESPACE = "kueue-system"
KUEUE_IMAGE = "registry.k8s.io/kueue/kueue"
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
FRAMEWORKS = ("batch/job", "trainer.kubeflow.org/trainjob")
SOURCE = "/spec/dependencies/kueue"


def kueue_install(site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
    """Kueue's namespace and the GitOps objects installing its chart; none if not managed."""
    if not manages_queues(site):
        return []
    kueue = site.spec.dependencies.kueue
    release = ChartRelease(
        KUEUE_RELEASE,
        mirrored_chart(KUEUE_REF, site.spec.images.mirror),
        kueue.version,
        kueue.chart_digest,
        KUEUE_NAMESPACE,
        kueue_values(site, test_units),
    )
    gitops = site.spec.gitops
    project = site.metadata.name if gitops.repo_url else "default"
    app_name = f"{site.metadata.name}-{KUEUE_RELEASE}"
    objects = reference_objects(release, gitops_of(site), app_name=app_name, project=project)
    notes = (*reference_notes(release, gitops_of(site)), f"waitForPodsReady: {_ready_note(site)}")
    return [
        namespace(KUEUE_NAMESPACE, SOURCE),
        *(Manifest(obj, COMPONENT, SOURCE, notes=notes) for obj in objects),
    ]


def kueue_values(site: Site, test_units: Sequence[TestUnit]) -> Obj:
    """Chart values: the released controller image (mirrored) and the Configuration.

    The chart in Kueue's repository points at a staging image with `pullPolicy: Always`;
    the release image is named here so the mirror and images.txt see it.
    """
    kueue = site.spec.dependencies.kueue
    tag = f"v{kueue.version}"
    if kueue.image_digest:
        tag += f"@{kueue.image_digest}"
    image = {
        "repository": mirrored(KUEUE_IMAGE, site.spec.images.mirror),
        "tag": tag,
        "pullPolicy": "IfNotPresent",
    }
    config = dump_yaml(kueue_configuration(site, test_units))
    return {
        "controllerManager": {"manager": {"image": image}},
        "managerConfig": {"controllerManagerConfigYaml": config},
    }


def kueue_configuration(site: Site, test_units: Sequence[TestUnit]) -> Obj:
    """Kueue's default Configuration, but for integrations and `waitForPodsReady`.

    `blockAdmission` stays off: every flavor nvcregen writes is topology-aware, so Kueue
    places each run on nodes with room when it admits it, and two admitted runs never
    each hold part of the nodes they both need (the deadlock blocking guards against when
    quota is only logical). Blocking would admit one run at a time, each after the one
    before has all its pods ready: at 1,632 workloads (1,024 nodes, packed) that is hours
    of pod starts in a row (measured on the twin, issue 33). A run whose pods are not all
    ready within the timeout is still evicted and requeued with a backoff, at most
    `requeueLimit` times, then deactivated rather than retried forever.
    """
    kueue = site.spec.dependencies.kueue
    return {
        "apiVersion": CONFIG_API,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "Cohort.kueue.x-k8s.io": 1,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "waitForPodsReady": {
            "timeout": pods_ready_timeout(site, test_units),
            "blockAdmission": False,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffLimitCount": kueue.requeue_limit,
                "backoffBaseSeconds": BACKOFF_BASE_S,
                "backoffMaxSeconds": BACKOFF_MAX_S,
            },
        },
        "integrations": {"frameworks": list(FRAMEWORKS)},
    }


def pods_ready_timeout(site: Site, test_units: Sequence[TestUnit]) -> str:
    """`podsReadyTimeout`, else the plan's shortest test timeout, at least ten minutes."""
    return units.format_duration(pods_ready_timeout_ms(site, test_units))


def _ready_note(site: Site) -> str:
    kueue = site.spec.dependencies.kueue
    how = "podsReadyTimeout" if kueue.pods_ready_timeout else "the plan's shortest test, >= 10m"
    return f"timeout from {how}, no blockAdmission (TAS), at most {kueue.requeue_limit} requeues"
