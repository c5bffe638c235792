"""The shipped trainer-mode site with `readiness.periodic`, and its periods' logs.

`periodic_text()` adds a `periodic:` block under the shipped site's `packing:` line; its
stage `single-node` holds the DCGM levels and the intra-node NCCL tests.
`write_period_logs` writes what one period's Jobs print, as `packfactory` does for a
packed one-shot run.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

from oncallfactory import Busbw, healthy
from packfactory import Section, _nccl, dcgm_body, pod_name
from sitefactory import FILE, catalog, edit, parse
from trainerfactory import SHIPPED

from nvcregen.compile.postprocess import postprocess
from nvcregen.emit.canonical import dump_yaml
from nvcregen.engines.readiness.trainer.periodic import periodic_manifests
from nvcregen.plan.resolve import plan

PERIODIC = "    periodic: {schedule: '0 3 * * 0', stages: [single-node]}\n"


def periodic_text(block: str = PERIODIC) -> str:
    """The shipped trainer-mode site with `block` (a `periodic:` line) after `packing:`."""
    text = SHIPPED.read_text(encoding="utf-8")
    return edit(text, "    packing: packed\n", "    packing: packed\n" + block)


def period_job(cron: dict[str, Any], minutes: int) -> dict[str, Any]:
    """The Job the CronJob controller makes of `cron` for the period at `minutes`."""
    scheduled = _time(minutes * 60)
    template = cron["spec"]["jobTemplate"]
    name = f"{cron['metadata']['name']}-{minutes}"
    annotations = template["metadata"]["annotations"] | {
        "batch.kubernetes.io/cronjob-scheduled-timestamp": scheduled
    }
    labels = template["metadata"]["labels"] | {"batch.kubernetes.io/job-name": name}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": cron["metadata"]["namespace"],
            "labels": labels,
            "annotations": annotations,
            "creationTimestamp": scheduled,
        },
        "spec": template["spec"],
        "status": {"startTime": scheduled, "completionTime": _time(minutes * 60 + 1800)},
    }


def _time(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_period_logs(folder: Path, text: str, minutes: int, busbw: Busbw = healthy) -> list[str]:
    """Write one period's pod logs of every periodic CronJob of `text`, and its Jobs.

    Each node's pod prints the pack's sections as a packed Job's pod does
    (`packfactory.packed_logs`), starting at the period's scheduled time. Returns the
    periods' Job names.
    """
    site, _ = parse(text)
    found = postprocess(periodic_manifests(site, plan(site, catalog())), site, FILE)
    crons = [m.obj for m in found if m.kind == "CronJob"]
    seen: Counter[object] = Counter()
    jobs = []
    for cron in crons:
        job = period_job(cron, minutes)
        meta = job["metadata"]
        stage = meta["labels"]["nvcregen.io/stage"]
        tests = meta["annotations"]["nvcregen.io/tests"].split(",")
        nodes = meta["annotations"]["nvcregen.io/nodes"].split(",")
        where = folder / "logs" / meta["namespace"]
        where.mkdir(parents=True, exist_ok=True)
        for index, node in enumerate(nodes):
            pod = pod_name(meta["name"], index)
            sections = []
            for offset, test in enumerate(tests):
                start = _time(minutes * 60 + 300 * offset)
                body = (
                    dcgm_body(node, pod, start)
                    if test.startswith("dcgm-")
                    else _nccl(stage, test, (node,), (pod,), busbw, seen)
                )
                sections.append(Section(stage, test, 1, node, pod, start, body))
            log = "".join(s.text() for s in sections)
            (where / f"{pod}.log").write_text(log, encoding="utf-8")
        jobs.append(job)
    listing = dump_yaml({"apiVersion": "v1", "kind": "List", "items": jobs})
    (folder / "objects.yaml").write_text(listing, encoding="utf-8")
    return [j["metadata"]["name"] for j in jobs]
