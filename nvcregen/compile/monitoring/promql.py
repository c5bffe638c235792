"""Small PromQL builders shared by the recording rules, the alerts and the dashboard.

Every query selects this site's series: those labelled with its `cluster`, or with no
`cluster` label at all (a per-cluster Prometheus); other clusters' series in a shared
Prometheus are left out. Queries aggregate without `cluster` and rules set it, so series
with and without the label can never clash.
"""

from __future__ import annotations

import json

from nvcregen.spec.v1alpha1 import Site

SELECTOR = "$SELECTOR"  # where a template takes its label matchers (without braces)
WINDOW = "$WINDOW"  # where a template takes its max_over_time window
MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
_RE2_SPECIAL = frozenset("\\.+*?()|[]{}^$")
_IN_PROGRESS = 'nvcre_job_status{$SELECTOR, status="in_progress"}'


def promql_string(text: str) -> str:
    """Quote `text` as a PromQL double-quoted string."""
    return json.dumps(text, ensure_ascii=False)


def regex_escape(text: str) -> str:
    """Escape the RE2 metacharacters of `text`, so a regex matcher matches it literally."""
    return "".join(f"\\{c}" if c in _RE2_SPECIAL else c for c in text)


def cluster_matchers(site: Site, *extra: str) -> str:
    """Label matchers for this site's series (its `cluster` label, or none), plus `extra`."""
    own = f"cluster=~{promql_string(regex_escape(site.spec.cluster) + '|')}"
    return ", ".join((own, *extra))


def job_labels(site: Site) -> tuple[str, str]:
    """The labels that hold an NVCRE Job's namespace and name in Prometheus.

    NVCRE's metrics carry `namespace` and `job`; with `honorLabels: false` Prometheus
    keeps its own target labels under those names and renames NVCRE's to
    `exported_namespace` and `exported_job`.
    """
    if site.spec.monitoring.service_monitor.honor_labels:
        return "namespace", "job"
    return "exported_namespace", "exported_job"


def by_job(site: Site) -> str:
    """The labels that identify one NVCRE Job, for `by (...)`."""
    namespace, job = job_labels(site)
    return f"{namespace}, workflow, {job}"


def job_text(site: Site) -> str:
    """An alert template naming the Job: `<namespace>/<job> (<workflow>)`."""
    namespace, job = job_labels(site)
    return f"{{{{ $labels.{namespace} }}}}/{{{{ $labels.{job} }}}} ({{{{ $labels.workflow }}}})"


def in_progress(site: Site) -> str:
    """The series that are 1 while an NVCRE Job of this site runs."""
    return _IN_PROGRESS.replace(SELECTOR, cluster_matchers(site))


def not_in_progress(site: Site) -> str:
    """An `unless` clause that holds back a Job's alert while the Job still runs."""
    return f"unless on ({', '.join(job_labels(site))}) ({in_progress(site)} == 1)"


def whole_minutes(ms: int) -> int:
    """`ms` rounded up to a whole minute."""
    return -(-ms // MINUTE_MS) * MINUTE_MS
