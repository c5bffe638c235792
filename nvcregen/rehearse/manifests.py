"""The controllers' own manifests, adapted to run on loopback (read from `make twin`'s copy).

`make twin` copies from each module: kwok's `kustomize/stage`, Kueue's and JobSet's
`config/components/{crd,webhook}`, Trainer's `manifests/base/{crds,webhook}` and Flux's
`config/crd`. The CRDs are read as their kustomizations list them, with the conversion
sections their patches add; the webhook configurations with the JSON patches their
kustomizations name, each webhook then pointed at a Service on loopback.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

KUEUE_NAMESPACE = "kueue-system"
KUEUE_SERVICE = "kueue-webhook-service"  # Kueue names its webhook configurations after it
JOBSET_SERVICE = "jobset-webhook-service"  # JobSet's default `internalCertManagement` names


def yaml_documents(path: Path) -> list[dict[str, Any]]:
    """The mappings of a multi-document YAML file (empty documents left out)."""
    return [d for d in yaml.safe_load_all(path.read_text("utf-8")) if isinstance(d, dict)]


def service_reference(port: int, path: str | None = None) -> dict[str, Any]:
    """A webhook `clientConfig.service` naming Kueue's Service, on the webhook's port."""
    reference: dict[str, Any] = {"namespace": KUEUE_NAMESPACE, "name": KUEUE_SERVICE, "port": port}
    if path is not None:
        reference["path"] = path
    return reference


Conversion = Callable[[dict[str, Any]], None]  # points a patched conversion at its webhook


def kustomized_crds(folder: Path, convert: Conversion | None = None) -> list[dict[str, Any]]:
    """The CRDs a `kustomization.yaml` lists, by name, with the conversions its patches add.

    Each conversion is given to `convert` to point at the twin's webhook; patches without
    one, such as cert-manager's CA injection, are done by the caller instead.
    """
    kustomization = yaml_documents(folder / "kustomization.yaml")[0]
    crds = {}
    for name in kustomization["resources"]:
        for crd in yaml_documents(folder / name):
            crds[crd["metadata"]["name"]] = crd
    for entry in kustomization.get("patches") or [] if convert is not None else []:
        (patch,) = yaml_documents(folder / entry["path"])
        conversion = (patch.get("spec") or {}).get("conversion")
        if conversion is None or convert is None:
            continue
        convert(conversion)
        crds[patch["metadata"]["name"]]["spec"]["conversion"] = conversion
    return [crds[name] for name in sorted(crds)]


def kueue_crds(manifests: Path, port: int) -> list[dict[str, Any]]:
    """Kueue's CRDs with the conversion sections its kustomization patches in.

    The patches named in `config/components/crd/kustomization.yaml` are applied (those
    commented out there are not), their Service pointed at the webhook's port.
    """
    folder = manifests / "kueue" / "config" / "components" / "crd"

    def convert(conversion: dict[str, Any]) -> None:
        client = conversion["webhook"]["clientConfig"]
        client["service"] = service_reference(port, client["service"].get("path"))

    return kustomized_crds(folder, convert)


def kueue_webhooks(manifests: Path, port: int) -> list[dict[str, Any]]:
    """Kueue's webhook configurations, named as its release names them (`kueue-` prefix).

    Each webhook calls its Service on the webhook's port.
    """
    path = manifests / "kueue" / "config" / "components" / "webhook" / "manifests.yaml"
    configurations = yaml_documents(path)
    for configuration in configurations:
        configuration["metadata"]["name"] = "kueue-" + configuration["metadata"]["name"]
        for hook in configuration["webhooks"]:
            client = hook["clientConfig"]
            client["service"] = service_reference(port, client["service"].get("path"))
    return configurations


# --- JobSet's and Trainer's manifests, and a certificate for their webhooks -----------------


def json_patch(document: dict[str, Any], operations: Iterable[Mapping[str, Any]]) -> None:
    """Apply RFC 6902 `replace` and `add` operations to `document` in place.

    Those are what JobSet's and Trainer's webhook kustomizations use.

    Raises:
        ValueError: On another operation, or a path that does not exist.

    """
    for operation in operations:
        if operation["op"] not in {"replace", "add"}:
            raise ValueError(f"unsupported JSON patch operation {operation['op']!r}")
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in operation["path"].split("/")[1:]
        ]
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        value = copy.deepcopy(operation["value"])
        if isinstance(target, list):
            index = len(target) if last == "-" else int(last)
            if operation["op"] == "replace":
                target[index] = value
            else:
                target.insert(index, value)
        elif operation["op"] == "replace" and last not in target:
            raise ValueError(f"JSON patch: no {operation['path']} to replace")
        else:
            target[last] = value


def kustomized_webhooks(folder: Path) -> list[dict[str, Any]]:
    """The webhook configurations of a kubebuilder `webhook/` folder, patched.

    The JSON patches its kustomization.yaml names are applied (by target kind, and name
    when given).
    """
    kustomization = yaml_documents(folder / "kustomization.yaml")[0]
    configurations = [
        d
        for name in kustomization["resources"]
        for d in yaml_documents(folder / name)
        if d["kind"].endswith("WebhookConfiguration")
    ]
    for entry in kustomization.get("patches") or []:
        target = entry["target"]
        operations = yaml.safe_load((folder / entry["path"]).read_text("utf-8"))
        for configuration in configurations:
            if configuration["kind"] == target["kind"] and target.get("name") in {
                None,
                configuration["metadata"]["name"],
            }:
                json_patch(configuration, operations)
    return configurations


def point_webhooks(
    configurations: Iterable[dict[str, Any]], namespace: str, service: str, port: int, ca: bytes
) -> list[dict[str, Any]]:
    """Each webhook calling `service` in `namespace` on `port`, trusting `ca`.

    `ca` goes into each `caBundle`, as cert-manager's CA injection would write it.
    """
    pointed = []
    for configuration in configurations:
        for hook in configuration["webhooks"]:
            client = hook["clientConfig"]
            client["service"] = {
                "namespace": namespace,
                "name": service,
                "port": port,
                "path": client["service"]["path"],
            }
            client["caBundle"] = base64.b64encode(ca).decode()
        pointed.append(configuration)
    return pointed


def jobset_crds(manifests: Path, namespace: str, port: int, ca: bytes) -> list[dict[str, Any]]:
    """JobSet's CRD with the conversion section its kustomization patches in.

    The conversion calls its webhook Service on `port`, trusting `ca`.
    """
    folder = manifests / "jobset" / "config" / "components" / "crd"

    def convert(conversion: dict[str, Any]) -> None:
        client = conversion["webhook"]["clientConfig"]
        path = client["service"]["path"]
        client["service"] = {"namespace": namespace, "name": JOBSET_SERVICE, "port": port,
                             "path": path}  # fmt: skip
        client["caBundle"] = base64.b64encode(ca).decode()

    return kustomized_crds(folder, convert)


def trainer_crds(manifests: Path) -> list[dict[str, Any]]:
    """Trainer's CRDs (TrainJob, TrainingRuntime, ClusterTrainingRuntime): no conversion."""
    return kustomized_crds(manifests / "trainer" / "manifests" / "base" / "crds")


def kwok_stages(manifests: Path) -> list[Path]:
    """The kwok stage files the twin plays: node initialize and heartbeat, pod lifecycle.

    A node is made Ready and kept so with a lease; a Job's pod completes after its
    `pod-complete` delay.
    """
    stage = manifests / "kwok" / "kustomize" / "stage"
    files = [
        stage / "node" / "fast" / "node-initialize.yaml",
        stage / "node" / "heartbeat-with-lease" / "node-heartbeat-with-lease.yaml",
    ]
    pods = yaml_documents(stage / "pod" / "general" / "kustomization.yaml")[0]
    files += [stage / "pod" / "general" / name for name in pods["resources"]]
    return files


def faster_stage(stage: Mapping[str, Any], speed: float) -> dict[str, Any]:
    """A kwok pod Stage whose default delay and jitter are divided by `speed`.

    A delay a pod's annotation names is kept; node stages are returned as they are. The
    general pod stages wait 1-6 s each (create, ready, complete), which a rendered object
    cannot shorten without its pod template changing.
    """
    faster = copy.deepcopy(dict(stage))
    spec = faster.get("spec") or {}
    if (spec.get("resourceRef") or {}).get("kind") != "Pod":
        return faster  # a node's stages (initialize, heartbeat) keep their pace
    delay = spec.get("delay") or {}
    for key in ("durationMilliseconds", "jitterDurationMilliseconds"):
        if key in delay:
            delay[key] = int(delay[key] / speed)
    return faster
