"""A Grafana dashboard of NVCRE's readiness metrics, as a ConfigMap for Grafana's sidecar.

The JSON is built here as data and written with sorted keys, so the same site gives the
same bytes. Panels query the recording rules of `rules.py` when the site has them, and
the same PromQL over NVCRE's own metrics when it does not. Bandwidth gauges vanish when a
run ends, so the panels show each rule's `max_over_time` and a table of peaks over the
dashboard's time range, which opens on the site's readiness window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nvcregen.compile.monitoring.promql import cluster_matchers, promql_string
from nvcregen.compile.monitoring.rules import COMPONENT, RECORDINGS, Recording, bandwidth_window
from nvcregen.core import units
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

CONFIG_MAP = "nvcregen-dashboard-nvcre"
DASHBOARD_FILE = "nvcre-readiness.json"
SIDECAR_LABELS = {"grafana_dashboard": "1"}
SCHEMA_VERSION = 39
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
NCCL_TEST = 'nccl_test=~"$nccl_test"'
_RULES = {r.metric: r for r in RECORDINGS}


class _Queries:
    """PromQL for each recorded series: the recorded name, or the rule's own expression."""

    def __init__(self, site: Site, test_units: Sequence[TestUnit], *, recorded: bool) -> None:
        self.site = site
        self.window = bandwidth_window(test_units)
        self.recorded = recorded

    def series(self, metric: str, *extra: str, window: str | None = None) -> str:
        """The series recorded for `metric`, restricted by `extra` label matchers."""
        rule: Recording = _RULES[metric]
        if self.recorded:
            own = f"cluster={promql_string(self.site.spec.cluster)}"
            return f"{rule.record}{{{', '.join((own, *extra))}}}"
        return rule.expr(cluster_matchers(self.site, *extra), window or self.window)

    def peak(self, metric: str) -> str:
        """The largest value of a bandwidth series per test and size over the time range."""
        if not self.recorded:
            return self.series(metric, NCCL_TEST, window="$__range")
        inner = self.series(metric, NCCL_TEST)
        return f"max by (nccl_test, message_size_bytes) (max_over_time({inner}[$__range]))"


def dashboard_config_map(site: Site, test_units: Sequence[TestUnit], *, recorded: bool) -> Manifest:
    """The dashboard as a ConfigMap labelled `grafana_dashboard: "1"` for Grafana's sidecar.

    Args:
        site: The site.
        test_units: The planned tests; their timeouts set the bandwidth window.
        recorded: Whether the site's PrometheusRule records the series the panels query.

    Returns:
        A ConfigMap in the NVCRE namespace holding the dashboard JSON.

    """
    text = json.dumps(
        dashboard(site, test_units, recorded=recorded),
        sort_keys=True,
        indent=2,
        ensure_ascii=False,
    )
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIG_MAP,
            "namespace": site.spec.nvcre.namespace,
            "labels": dict(SIDECAR_LABELS),
        },
        "data": {DASHBOARD_FILE: text + "\n"},
    }
    return Manifest(obj, COMPONENT, "/spec/monitoring/dashboards")


def dashboard(site: Site, test_units: Sequence[TestUnit], *, recorded: bool) -> Obj:
    """The Grafana dashboard model (schema version 39) for one site."""
    q = _Queries(site, test_units, recorded=recorded)
    return {
        "title": f"NVCRE readiness: {site.metadata.name}",
        "uid": f"nvcre-{site.metadata.name}",
        "description": (
            f"NCCL bandwidth, goodput and job status of NVCRE readiness runs on cluster "
            f"{site.spec.cluster}. Bandwidth gauges vanish when a run ends: panels show the "
            f"peak over the last {q.window}; final results live in the measurement objects."
        ),
        "tags": ["nvcre", "nvcregen", "readiness"],
        "editable": False,
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "timezone": "browser",
        "refresh": "1m",
        "time": {"from": f"now-{_relative(site.spec.readiness.window.deadline)}", "to": "now"},
        "templating": {"list": _variables(q)},
        "annotations": {"list": []},
        "panels": _panels(site, q),
    }


def _variables(q: _Queries) -> list[Obj]:
    source = q.series("nvcre_nccl_busbw_gbs")
    if not q.recorded:  # label_values() wants a series selector, not an expression
        source = f"nvcre_nccl_busbw_gbs{{{cluster_matchers(q.site)}}}"
    values = f"label_values({source}, nccl_test)"
    return [
        {"name": "datasource", "label": "Data source", "type": "datasource"}
        | {"query": "prometheus", "current": {}, "hide": 0, "refresh": 1},
        {"name": "nccl_test", "label": "NCCL test", "type": "query", "datasource": DATASOURCE}
        | {"query": {"query": values, "refId": "nccl_test"}, "definition": values}
        | {"includeAll": True, "multi": True, "allValue": ".*", "current": {}}
        | {"refresh": 2, "sort": 1, "hide": 0},
    ]


def _panels(site: Site, q: _Queries) -> list[Obj]:
    size_legend = "{{nccl_test}} {{message_size_bytes}} B"
    return [
        _row(1, "NCCL bandwidth (GB/s: gigabytes per second)", 0),
        _timeseries(2, "Bus bandwidth by message size", (0, 1, 12, 9), "GBs")
        | _targets((q.series("nvcre_nccl_busbw_gbs", NCCL_TEST), size_legend)),
        _timeseries(3, "Algorithm bandwidth by message size", (12, 1, 12, 9), "GBs")
        | _targets((q.series("nvcre_nccl_algbw_gbs", NCCL_TEST), size_legend)),
        _peak_table(4, q),
        _row(5, "Goodput", 18),
        _timeseries(6, "Goodput ratio by workflow (worst job)", (0, 19, 24, 8), "percentunit")
        | _targets((q.series("nvcre_goodput_ratio"), "{{workflow}}"))
        | {"fieldConfig": _field_config("percentunit", _goodput_bound(site))},
        _row(7, "Jobs", 27),
        _timeseries(8, "Jobs by status", (0, 28, 12, 8), "short")
        | _targets((q.series("nvcre_job_status"), "{{status}}")),
        _timeseries(9, "Nodes with hardware failures by workflow", (12, 28, 12, 8), "short")
        | _targets((q.series("nvcre_job_failed_nodes"), "{{workflow}}")),
    ]


def _peak_table(panel_id: int, q: _Queries) -> Obj:
    conversion = {"targetField": "message_size_bytes", "destinationType": "number"}
    return {
        "id": panel_id,
        "type": "table",
        "title": "Peak bus bandwidth by message size over the time range",
        "datasource": DATASOURCE,
        "gridPos": _grid((0, 10, 24, 8)),
        "fieldConfig": _field_config("GBs", None),
        "options": {"showHeader": True},
        "targets": [
            {
                "refId": "A",
                "datasource": DATASOURCE,
                "expr": q.peak("nvcre_nccl_busbw_gbs"),
                "instant": True,
                "range": False,
                "format": "table",
            }
        ],
        "transformations": [
            {"id": "convertFieldType", "options": {"conversions": [conversion]}},
            {"id": "sortBy", "options": {"sort": [{"field": "message_size_bytes"}]}},
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
        ],
    }


def _row(panel_id: int, title: str, y: int) -> Obj:
    grid = {"x": 0, "y": y, "w": 24, "h": 1}
    return {"id": panel_id, "type": "row", "title": title, "collapsed": False} | {
        "gridPos": grid,
        "panels": [],
    }


def _timeseries(panel_id: int, title: str, grid: tuple[int, int, int, int], unit: str) -> Obj:
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": title,
        "datasource": DATASOURCE,
        "gridPos": _grid(grid),
        "fieldConfig": _field_config(unit, None),
        "options": {
            "legend": {
                "displayMode": "table",
                "placement": "right",
                "calcs": ["max", "lastNotNull"],
            },
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
    }


def _targets(*queries: tuple[str, str]) -> Obj:
    return {
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr}
            | {"legendFormat": legend, "range": True}
            for i, (expr, legend) in enumerate(queries)
        ]
    }


def _field_config(unit: str, bound: float | None) -> Obj:
    defaults: Obj = {"unit": unit}
    if unit == "percentunit":
        defaults |= {"min": 0, "max": 1}
    if bound is not None:
        steps = [{"color": "red", "value": None}, {"color": "green", "value": bound}]
        defaults["thresholds"] = {"mode": "absolute", "steps": steps}
        defaults["custom"] = {"thresholdsStyle": {"mode": "line"}}
    return {"defaults": defaults, "overrides": []}


def _grid(grid: tuple[int, int, int, int]) -> Obj:
    x, y, w, h = grid
    return {"x": x, "y": y, "w": w, "h": h}


def _goodput_bound(site: Site) -> float | None:
    """The highest goodput the site asks for, drawn as a line on the goodput panel."""
    bounds = [
        units.parse_comparison(t.goodput, unit_kind="ratio").value
        for t in site.spec.thresholds
        if t.goodput is not None
    ]
    return max(bounds, default=None)


def _relative(duration: str) -> str:
    """A Grafana relative time for a duration: whole hours as `12h`, else minutes."""
    ms = units.parse_duration(duration)
    hours, rest = divmod(ms, 3_600_000)
    return f"{hours}h" if hours and not rest else f"{-(-ms // 60_000)}m"
