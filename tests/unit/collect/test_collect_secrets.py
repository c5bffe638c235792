"""Secrets in what a cluster answers stay out of the archive's readable files (issue #32).

A condition's message is NVCRE's text: it may quote a token or a `user:password@` URL it
was given (an image pull, a Git clone). summary.json and verdicts.json are published,
so collect masks them there; the objects themselves are kept as read.
"""

from __future__ import annotations

from pathlib import Path

from labstate import condition, find, lab_state, write_export

from nvcregen.collect.collector import collect
from nvcregen.collect.model import CollectOptions
from nvcregen.collect.output import render_json, render_text

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a GitHub token's shape: 36 after ghp_
PASSWORD = "hunter2hunter2"
MESSAGE = (
    f"pull https://ci-bot:{PASSWORD}@registry.example.com/v2/x failed; token {TOKEN} was refused"
)


def test_a_secret_in_a_condition_message_is_masked_in_summary_and_verdicts(
    tmp_path: Path,
) -> None:
    objects = lab_state()
    run = find(objects, "WorkloadRun", "lab-single-node-dcgm-l1-0003")
    run["status"]["conditions"] = [
        condition("Failed", "True", "WorkloadFailed", MESSAGE),
        condition("Succeeded", "False", "WorkloadFailed"),
        condition("InProgress", "False", "WorkloadFailed"),
    ]
    wf = find(objects, "Workflow", "lab-single-node-0001-communication-nccl-all-reduce")
    for found in wf["status"]["conditions"]:  # a Certification's run reads its Workflow's
        if found["status"] == "True":
            found["message"] = f"cloned with {TOKEN}"
    folder = write_export(tmp_path / "export", objects)
    outcome = collect(CollectOptions(str(SITE_FILE), tmp_path / "results", ROOT, from_dir=folder))
    summary = (outcome.archive.path / "summary.json").read_text(encoding="utf-8")
    verdicts = (outcome.archive.path / "verdicts.json").read_text(encoding="utf-8")
    printed = render_text(outcome) + render_json(outcome)  # what CI logs keep (review)
    for text in (summary, verdicts, printed):
        assert TOKEN not in text and PASSWORD not in text
    assert "pull https://ci-bot:***@registry.example.com/v2/x failed; token *** was" in summary
    assert "cloned with ***" in summary
