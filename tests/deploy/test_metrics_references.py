"""Alert rules and Grafana dashboards refer only to series the sidecar really exports.

The reference is live: a real `Harvester` (the composition root, embedded cluster, memory store)
is started and its /metrics page fetched over HTTP, after every `record_*` helper of
harvester/observability/metrics.py has been called once, so that labelled families have samples.
Series names come from the families' declared types (so a family still without samples counts
too); label names and label values are checked where samples show them. A renamed metric, label
or control loop therefore fails here instead of leaving an alert that can never fire.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from harvester.app import Harvester
from harvester.config import Settings

from deploy_files import ROOT, running_sidecar

ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
PROMETHEUS = ROOT / "deploy" / "prometheus" / "prometheus.yml"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana" / "dashboards").glob("*.json"))
SERIES_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
    "info": ("_info",),
    "unknown": ("",),
}
TARGET_LABELS = {"job", "instance"}  # added by Prometheus to every scraped series
# Labels whose values the running code decides (loop names of the composition root, the record
# helpers' ok/error): matchers on them must use a real value. Other labels' values in _populate
# are placeholders, so only their names are checked.
CODE_VALUED_LABELS = {"loop", "outcome"}

SERIES_RE = re.compile(r"\b(harvester_[A-Za-z0-9_:]+)(?:\{([^}]*)\})?")
MATCHER_RE = re.compile(r'([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
GROUPING_RE = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")


@dataclass
class Exported:
    series: set[str] = field(default_factory=set)
    labels: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # series -> label names
    values: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # label -> values seen


def _populate(app: Harvester) -> None:
    """One call of every record helper: real loop names and both outcomes, placeholders elsewhere."""
    m = app.metrics
    for loop in app.status()["loops"]:
        m.record_tick(loop["name"], True, 0.001, 1.0)
        m.record_tick(loop["name"], False, 0.001, 1.0)
    m.record_poll(True, {"RUNNING": 1})
    m.record_poll(False)
    m.record_telemetry_age(1.0)
    m.record_rows_written("node_samples", 1)
    m.record_rows_pruned("node_samples", 1)
    m.record_grpc("/harvester.v1.YarnAdvisor/Example", "OK", 0.001)
    m.record_harvest({"node-1:45454": 8}, {"periodic-0": 8})
    m.record_reserves({"periodic-0": 0.1})
    m.record_kills({"rm_overcommit": 1})
    m.record_capacity_outcomes({"sent:cut": 1, "stale:snapshot": 1})
    m.record_decision("guard", 0.001)
    m.record_class_model(1, {"periodic": 1}, {"periodic": 2})
    m.record_action_errors({"set_capacity": 1})


@pytest.fixture(scope="module")
def exported() -> Exported:
    with running_sidecar() as app:
        _populate(app)
        with urllib.request.urlopen(f"http://{app.admin.address}/metrics", timeout=5) as resp:
            text = resp.read().decode()
    out = Exported()
    for family in text_string_to_metric_families(text):
        out.series.update(family.name + s for s in SERIES_SUFFIXES[family.type])
        for sample in family.samples:
            out.labels[sample.name].update(sample.labels)
            for k, v in sample.labels.items():
                out.values[k].add(v)
    assert any(s.startswith("harvester_") for s in out.series), "no harvester_* series at /metrics"
    return out


def _expressions() -> list[tuple[str, str, list[str]]]:
    """(where, PromQL, label names the text around it interpolates) for every rule and panel."""
    found = []
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            notes = " ".join(str(v) for v in (rule.get("annotations") or {}).values())
            found.append((f"alerts.yml {rule['alert']}", rule["expr"], re.findall(r"\$labels\.(\w+)", notes)))
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel["targets"]:
                legend = re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", ""))
                found.append((f"{path.name} '{panel['title']}'", target["expr"], legend))
    return found


EXPRESSIONS = _expressions()


@pytest.mark.parametrize(("where", "expr", "interpolated"), EXPRESSIONS, ids=[w for w, _, _ in EXPRESSIONS])
def test_expression_uses_exported_series_and_labels(
    where: str, expr: str, interpolated: list[str], exported: Exported
) -> None:
    uses = SERIES_RE.findall(expr)
    available = set(TARGET_LABELS)
    for name, matchers in uses:
        assert name in exported.series, f"{where}: {name} is not exported (harvester/observability/metrics.py)"
        labels = exported.labels.get(name, set())
        available |= labels | ({"le"} if name.endswith("_bucket") else set())
        for label, op, value in MATCHER_RE.findall(matchers):
            if not labels:  # a family without samples yet: its label names are unknown here
                continue
            assert label in labels | TARGET_LABELS, f"{where}: {name} has no label {label!r} ({sorted(labels)})"
            if op == "=" and label in CODE_VALUED_LABELS:
                assert value in exported.values[label], (
                    f"{where}: {label}={value!r} is never exported (values: {sorted(exported.values[label])})"
                )
    if not uses:
        assert re.search(r"\bup\{", expr), f"{where}: neither a harvester_* series nor up{{...}}: {expr}"
    grouped = [g.strip() for clause in GROUPING_RE.findall(expr) for g in clause.split(",") if g.strip()]
    for label in grouped + interpolated:
        assert label in available, (
            f"{where}: label {label!r} is not on any series of the expression ({sorted(available)}; "
            "a family without samples needs a record_* call in _populate)"
        )


def test_up_selectors_name_the_scrape_job() -> None:
    jobs = {j["job_name"] for j in yaml.safe_load(PROMETHEUS.read_text())["scrape_configs"]}
    used = {m for _, expr, _ in EXPRESSIONS for m in re.findall(r'\bup\{job="([^"]+)"\}', expr)}
    assert used and used <= jobs, f"up{{job=...}} names {sorted(used)}, prometheus.yml scrapes {sorted(jobs)}"


def test_alert_rules_are_complete_and_unique() -> None:
    names = []
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            names.append(rule["alert"])
            assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
            assert rule["annotations"]["summary"], rule["alert"]
            assert re.fullmatch(r"\d+[smh]", rule["for"]), rule["alert"]
            assert rule["expr"].count("(") == rule["expr"].count(")"), rule["alert"]
    assert len(names) == len(set(names)), f"duplicate alert names: {names}"


def test_stale_telemetry_alert_uses_the_sidecars_threshold(compose_settings: Settings) -> None:
    rules = {r["alert"]: r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]}
    m = re.fullmatch(r"\s*harvester_telemetry_age_seconds\s*>\s*([0-9.]+)\s*", rules["HarvesterTelemetryStale"]["expr"])
    assert m, "HarvesterTelemetryStale must be `harvester_telemetry_age_seconds > <telemetry.stale_after_s>`"
    assert float(m.group(1)) == compose_settings.telemetry.stale_after_s


def test_dashboards_are_loadable_grafana_json() -> None:
    assert DASHBOARDS, "no dashboard under deploy/grafana/dashboards"
    for path in DASHBOARDS:
        dash: dict[str, Any] = json.loads(path.read_text())
        assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 30, path.name
        ids = [p["id"] for p in dash["panels"]]
        assert len(ids) == len(set(ids)), f"{path.name}: duplicate panel ids"
        for panel in dash["panels"]:
            assert panel["targets"], f"{path.name}: panel {panel['title']!r} has no query"
            assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), panel["title"]
