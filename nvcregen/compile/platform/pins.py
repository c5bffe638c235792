"""Whether everything a site installs is pinned by content, and by real digests (pure).

A tag or a chart version can be moved; a digest names bytes. nvcregen installs charts
(NVCRE, Kubeflow Trainer, Kueue) and their controllers (NVCRE's manager, Trainer's, the
bundled JobSet's, Kueue's) besides the workload images (checked as NVC314): each gets a
digest pin in the site. Digests copied from nvcregen's own examples
(`catalog/example-digests.yaml`) pin nothing anyone pulled.

- NVC376: an example digest; information, an error under `--strict`.
- NVC377: a chart or controller image without a digest; a warning, an error under `--strict`.
- NVC378: an offline site (`images.mirror`) whose multi-node NCCL runs need sshd in the
  nccl image (`images.ncclShipsSshd`), since their workers cannot `apt-get` it at start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from nvcregen.catalog.models import ExampleDigests
from nvcregen.compile.queue.workloads import manages_queues
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")


@dataclass(frozen=True)
class Pin:
    """One thing a site installs, where its digest is written, and the digest if any."""

    what: str
    pointer: str
    digest: str | None


def pins(site: Site) -> list[Pin]:
    """Every chart and controller image the site installs, with its digest pin."""
    spec = site.spec
    found: list[Pin] = []
    if readiness_of(site).installs_nvcre:
        chart = spec.nvcre.chart
        if chart.archive is None:  # an archive is pinned by its sha256 (NVC401)
            what = f"the NVCRE chart {chart.ref} {chart.version}"
            found.append(Pin(what, "/spec/nvcre/chart/digest", chart.digest))
        image = spec.nvcre.image
        found.append(
            Pin(
                f"the NVCRE manager image {image.repository}",
                "/spec/nvcre/image/digest",
                image.digest,
            )
        )
    deps = spec.dependencies
    trainer = "/spec/dependencies/trainer"
    if deps.trainer.managed:
        found.append(
            Pin(
                f"the Kubeflow Trainer chart {deps.trainer.version}",
                f"{trainer}/chartDigest",
                deps.trainer.chart_digest,
            )
        )
        found.append(
            Pin(
                f"the Trainer controller image v{deps.trainer.version}",
                f"{trainer}/imageDigest",
                deps.trainer.image_digest,
            )
        )
        if deps.jobset.managed:
            found.append(
                Pin(
                    f"the JobSet controller image v{deps.jobset.version}",
                    "/spec/dependencies/jobset/imageDigest",
                    deps.jobset.image_digest,
                )
            )
    if manages_queues(site):
        kueue = "/spec/dependencies/kueue"
        found.append(
            Pin(
                f"the Kueue chart {deps.kueue.version}",
                f"{kueue}/chartDigest",
                deps.kueue.chart_digest,
            )
        )
        found.append(
            Pin(
                f"the Kueue controller image v{deps.kueue.version}",
                f"{kueue}/imageDigest",
                deps.kueue.image_digest,
            )
        )
    return found


def check_pins(
    site: Site,
    doc: Document,
    examples: ExampleDigests | None,
    test_units: Iterable[TestUnit] = (),
    *,
    strict: bool = False,
) -> list[Diagnostic]:
    """NVC376, NVC377 and NVC378 for a site (see the module)."""
    found = [_unpinned(doc, pin, strict=strict) for pin in pins(site) if pin.digest is None]
    if examples is not None:
        found += [
            _example(doc, where, digest, examples, strict=strict)
            for where, digest in _digests(site)
            if examples.find(digest) is not None
        ]
    return found + _sshd(site, doc, test_units)


def _digests(site: Site) -> list[tuple[str, str]]:
    """(pointer, digest) of every digest the site writes: pins and workload images."""
    found = [(pin.pointer, pin.digest) for pin in pins(site) if pin.digest is not None]
    for role in ("nccl", "dcgm", "training"):
        image = getattr(site.spec.images, role)
        match = _DIGEST.search(image) if image else None
        if match:
            found.append((f"/spec/images/{role}", match.group(0)))
    return found


def _unpinned(doc: Document, pin: Pin, *, strict: bool) -> Diagnostic:
    key = pin.pointer.rsplit("/", 1)[-1]
    how = (
        "helm pull <ref> --version <version>, or oras manifest fetch --descriptor"
        if "chart" in pin.what
        else "crane digest <image>"
    )
    return Diagnostic(
        doc.span(pin.pointer),
        Severity.ERROR if strict else Severity.WARNING,
        codes.NVC377.code,
        f"{pin.what} is pinned by version or tag only: the registry can move it",
        pin.pointer,
        f"add {key}: sha256:<digest>, the digest your registry reports ({how})",
    )


def _example(
    doc: Document, where: str, digest: str, examples: ExampleDigests, *, strict: bool
) -> Diagnostic:
    entry = examples.find(digest)
    assert entry is not None
    return Diagnostic(
        doc.span(where),
        Severity.ERROR if strict else Severity.INFO,
        codes.NVC376.code,
        f"{digest[:19]}... is an example digest from nvcregen's own sites ({entry.what}): it "
        "pins nothing anyone pulled",
        where,
        "replace it with the digest your registry reports (catalog/example-digests.yaml lists "
        "every example digest)",
    )


def _sshd(site: Site, doc: Document, test_units: Iterable[TestUnit]) -> list[Diagnostic]:
    images = site.spec.images
    multi_node = [u for u in test_units if kind_of(u.test).collective and u.nodes_per_job > 1]
    if not images.offline or images.nccl_ships_sshd or not multi_node:
        return []
    where = "/spec/images"
    message = (
        f"this site is offline (images.mirror), but its {len(multi_node)} multi-node NCCL "
        "test(s) run MPI workers that install openssh-server at start when the nccl image "
        "lacks sshd, which an offline node cannot"
    )
    hint = (
        "build an nccl image with openssh-server (FROM the catalog's, RUN apt-get install -y "
        "openssh-server), push it to the mirror, pin it in images.nccl and set "
        "images.ncclShipsSshd: true"
    )
    return [Diagnostic(doc.span(where), Severity.ERROR, codes.NVC378.code, message, where, hint)]
