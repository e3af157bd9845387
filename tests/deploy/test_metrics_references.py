"""Alert rules and Grafana dashboards refer only to series the sidecar really exports.

Every PromQL expression of deploy/prometheus/alerts.yml and deploy/grafana/dashboards/*.json is
parsed (promql-parser, the Prometheus grammar) into the series it selects, their label matchers
and the labels it groups or matches by. The reference is live: a real `Harvester` (composition
root, embedded cluster, memory store, HDFS-H against a fake NameNode over HTTP) is started,
driven (plug-in long-polls, a gRPC watch, a failing NameNode poll) and its /metrics page
fetched over HTTP. Families a healthy sidecar does not produce within seconds (kills, refused
actions, stale nodes, failed RM polls) are then recorded once through their `record_*` helpers,
with the label values their recording code uses (checked against that code below).

Series names come from the families' declared types (counter `_total`, histogram `_bucket`,
`_sum`, `_count`), so a family without samples counts too. Label names are checked wherever a
series shows them; a value an `=` matcher or a regex alternative names must have been exported.
A renamed metric, label, loop or outcome therefore fails here instead of leaving an alert that
can never fire or a panel that stays empty.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import grpc
import promql_parser as pq
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from harvester.app import Harvester
from harvester.v1 import hdfs_placement_pb2 as hdfs_pb
from harvester.v1 import hdfs_placement_pb2_grpc as hdfs_grpc

from deploy_files import ROOT, running_sidecar
from nn_fakes import DN, FakeNameNode, info_doc

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
PROMETHEUS_SERIES = {"up"}  # Prometheus's own per-target series
# Series the embedded default's loops export once their first fits are done (labelled samples).
LOOP_SERIES = ("harvester_harvest_node_vcores{", "harvester_harvest_reserve_fraction{", "harvester_harvest_classes{",
               'harvester_loop_last_tick_timestamp_seconds{loop="hdfs-refit"}')
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}

# _populate's label values and the module whose code records them (test below).
POPULATED_FROM = {
    "signal_graceful": "harvester/decisions/guard.py", "signal_forceful": "harvester/decisions/guard.py",
    "rm_overcommit": "harvester/decisions/guard.py", "set_capacity": "harvester/loop/guard.py",
    "kill": "harvester/loop/guard.py", "stale:no_utilization": "harvester/decisions/guard.py",
    "stale:node": "harvester/decisions/guard.py", "stale:missing": "harvester/decisions/guard.py",
    "stale:snapshot": "harvester/decisions/guard.py", "node_samples": "harvester/loop/record_telemetry.py",
}


# --- what an expression refers to ---------------------------------------------------------

@dataclass(frozen=True)
class Refs:
    selectors: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]  # (series, ((label, op, value), ...))
    labels: tuple[str, ...]  # label names of by/without/on/ignoring/group_left/group_right

    @property
    def names(self) -> set[str]:
        return {name for name, _ in self.selectors}


_OPS = ((pq.MatchOp.Equal, "="), (pq.MatchOp.NotEqual, "!="), (pq.MatchOp.Re, "=~"), (pq.MatchOp.NotRe, "!~"))


def _op(op: Any) -> str:
    return next(text for kind, text in _OPS if op == kind)  # the enum is not hashable


def references(expr: str) -> Refs:
    """The series, matchers and grouping labels of one PromQL expression (Grafana's $__ variables allowed)."""
    for var, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(var, value)
    selectors: list[tuple[str, tuple[tuple[str, str, str], ...]]] = []
    labels: list[str] = []

    def visit(node: Any) -> bool:
        if isinstance(node, pq.VectorSelector):
            matchers = [(m.name, _op(m.op), m.value) for m in node.matchers.matchers]
            name = node.name or next((v for k, op, v in matchers if k == "__name__" and op == "="), "")
            selectors.append((name, tuple(m for m in matchers if m[0] != "__name__")))
        elif isinstance(node, pq.AggregateExpr) and node.modifier is not None:
            labels.extend(node.modifier.labels)
        elif isinstance(node, pq.BinaryExpr) and node.modifier is not None:
            if node.modifier.matching is not None:
                labels.extend(node.modifier.matching.labels)
            labels.extend(node.modifier.group_labels or ())
        return True

    pq.walk(pq.parse(expr), visit)
    return Refs(tuple(selectors), tuple(labels))


@pytest.mark.parametrize(("expr", "names", "labels"), [
    ('up{job="harvester"} == 0', {"up"}, ()),
    ("histogram_quantile(0.95, sum by (loop, le) (rate(harvester_loop_tick_duration_seconds_bucket[5m])))",
     {"harvester_loop_tick_duration_seconds_bucket"}, ("loop", "le")),
    ("sum(rate(a_total[$__rate_interval])) / on (instance) group_left (job) max_over_time(b[5m:1m])",
     {"a_total", "b"}, ("instance", "job")),
    ('{__name__="harvester_telemetry_age_seconds"} > 30', {"harvester_telemetry_age_seconds"}, ()),
    ("count without (le) (x_bucket) unless ignoring (code) y", {"x_bucket", "y"}, ("le", "code")),
    ("time() - harvester_loop_last_tick_timestamp_seconds", {"harvester_loop_last_tick_timestamp_seconds"}, ()),
])
def test_references_parses_promql(expr: str, names: set[str], labels: tuple[str, ...]) -> None:
    refs = references(expr)
    assert refs.names == names and set(refs.labels) == set(labels)


def test_references_keeps_matchers() -> None:
    refs = references('sum by (instance) (increase(harvester_loop_ticks_total{outcome="error", loop=~"guard|hdfs-poll"}[10m]))')
    assert refs.selectors == (("harvester_loop_ticks_total", (("outcome", "=", "error"), ("loop", "=~", "guard|hdfs-poll"))),)


# --- what the sidecar exports ------------------------------------------------------------

@dataclass
class Exported:
    series: set[str] = field(default_factory=set)
    labels: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # series -> label names
    values: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))  # (series, label) -> values


def _scrape(base: str) -> str:
    with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
        return resp.read().decode()


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str | None]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("ETag")
    except urllib.error.HTTPError as err:  # 304 arrives as an HTTPError
        return err.code, err.headers.get("ETag")


def _drive(app: Harvester, base: str, nn: FakeNameNode) -> None:
    """Real traffic: the plug-ins' long-polls, a gRPC watch, one failing NameNode poll."""
    deadline = time.monotonic() + 120  # a bound, not a measurement: the loops tick every second
    while time.monotonic() < deadline and (any(s not in _scrape(base) for s in LOOP_SERIES)
                                           or _get(base + "/v1/hdfs/placement-table")[0] != 200):
        time.sleep(0.2)  # the first class and grid fits take seconds on a loaded machine
    for path in ("/v1/hdfs/placement-table", "/v1/yarn/node-ordering"):
        held = []
        for _ in range(5):  # a new version may land between the two requests: then ask again
            status, etag = _get(base + path)
            assert status == 200 and etag, path
            held.append(_get(f"{base}{path}?wait=0.05", {"If-None-Match": etag})[0])
            if held[-1] == 304:  # held open as a waiter, then "still current"
                break
        assert held[-1] == 304, f"{path}: {held}"
    with grpc.insecure_channel(app.grpc.address) as channel:
        stub = hdfs_grpc.HdfsPlacementStub(channel)
        stream = stub.WatchPlacementTable(hdfs_pb.WatchPlacementTableRequest())
        assert next(stream).version >= 1  # the watch is counted before its first message
        stream.cancel()
        assert stub.GetPlacementTable(hdfs_pb.GetPlacementTableRequest()).version >= 1  # recorded before it answers
    nn.status_code = 500
    [poll] = [loop for loop in app.loops if loop.name == "hdfs-poll"]
    assert poll.run_once() is None, "a NameNode answering 500 must fail the hdfs-poll tick"
    nn.status_code = 200


def _populate(app: Harvester) -> None:
    """Families a healthy sidecar does not produce within seconds, with their code's label values."""
    m = app.metrics
    m.record_poll(False)
    m.record_rows_pruned("node_samples", 1)
    m.record_kills({"signal_graceful": 1, "signal_forceful": 1, "rm_overcommit": 1})
    m.record_action_errors({"set_capacity": 1, "kill": 1})
    m.record_capacity_outcomes({"stale:no_utilization": 1, "stale:node": 1, "stale:missing": 1, "stale:snapshot": 1})
    m.record_hdfs_reimages(1)
    m.record_rises({"periodic-0": (2, 1)})            # decisions/guard.py GuardDecision.coverage
    m.record_am_kills({"primary_short": 1})           # decisions/guard_kills.py _last_resort


def _parse(text: str, into: Exported) -> None:
    for family in text_string_to_metric_families(text):
        into.series.update(family.name + s for s in SERIES_SUFFIXES[family.type])
        for sample in family.samples:
            into.labels[sample.name].update(sample.labels)
            for k, v in sample.labels.items():
                into.values[(sample.name, k)].add(v)


@pytest.fixture(scope="module")
def exported() -> Exported:
    nn = FakeNameNode(info_doc([DN(f"dn-{i}", f"10.0.0.{i}", rack=f"/r{i % 2}") for i in range(4)]))
    fast = {"telemetry": {"poll_interval_s": 1}, "harvesting": {"control_period_s": 1},
            "hdfs": {"enabled": True, "namenode_urls": [nn.url]}}
    out = Exported()
    try:
        with running_sidecar(fast) as app:
            base = f"http://{app.admin.address}"
            _drive(app, base, nn)
            _populate(app)
            _parse(_scrape(base), out)
    finally:
        nn.close()
    assert any(s.startswith("harvester_") for s in out.series), "no harvester_* series at /metrics"
    return out


def test_populated_values_are_the_recording_codes_own() -> None:
    for value, module in POPULATED_FROM.items():
        assert f'"{value}"' in (ROOT / module).read_text(), f"{module} no longer records {value!r}"


# --- alerts and panels ---------------------------------------------------------------------

def _expressions() -> list[tuple[str, str, list[str]]]:
    """(where, PromQL, label names the text around it interpolates) for every rule and panel."""
    found = []
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            notes = " ".join(str(v) for v in (rule.get("annotations") or {}).values())
            found.append((f"alerts.yml {rule['alert']}", rule["expr"], re.findall(r"\$labels\.(\w+)", notes)))
    for path in DASHBOARDS:
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                legend = re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", ""))
                found.append((f"{path.name} '{panel['title']}' {target['refId']}", target["expr"], legend))
    return found


EXPRESSIONS = _expressions()


def _alternatives(regex: str) -> list[str] | None:
    """The literal alternatives of a regex like `a|b-c`, or None for anything fancier."""
    return regex.split("|") if re.fullmatch(r"[\w:.-]+(\|[\w:.-]+)*", regex) else None


@pytest.mark.parametrize(("where", "expr", "interpolated"), EXPRESSIONS, ids=[w for w, _, _ in EXPRESSIONS])
def test_expression_uses_exported_series_and_labels(
    where: str, expr: str, interpolated: list[str], exported: Exported
) -> None:
    refs = references(expr)
    assert refs.selectors, f"{where}: selects no series: {expr}"
    available = set(TARGET_LABELS)
    for name, matchers in refs.selectors:
        if name in PROMETHEUS_SERIES:
            continue
        assert name in exported.series, f"{where}: {name} is not exported (harvester/observability/metrics.py)"
        labels = exported.labels.get(name, set())
        assert labels or not matchers, f"{where}: {name} has no samples to check {matchers} against"
        available |= labels
        for label, op, value in matchers:
            if label in TARGET_LABELS:
                continue
            assert label in labels, f"{where}: {name} has no label {label!r} ({sorted(labels)})"
            seen = exported.values[(name, label)]
            wanted = [value] if op == "=" else (_alternatives(value) or []) if op == "=~" else []
            for v in wanted:
                assert v in seen, f"{where}: {name}{{{label}={v!r}}} is never exported (values: {sorted(seen)})"
    for label in [*refs.labels, *interpolated]:
        assert label in available, f"{where}: label {label!r} is not on any series of the expression ({sorted(available)})"


def test_up_selectors_name_the_scrape_job() -> None:
    jobs = {j["job_name"] for j in yaml.safe_load(PROMETHEUS.read_text())["scrape_configs"]}
    used = {v for _, expr, _ in EXPRESSIONS for name, ms in references(expr).selectors if name == "up"
            for label, op, v in ms if label == "job" and op == "="}
    assert used and used <= jobs, f"up{{job=...}} names {sorted(used)}, prometheus.yml scrapes {sorted(jobs)}"


# --- dashboards ----------------------------------------------------------------------------

REQUIRED_ROWS = {"Sidecar", "Harvesting (YARN-H)", "HDFS-H placement", "Java shim advice"}


def _overlaps(a: dict[str, int], b: dict[str, int]) -> bool:
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def test_dashboards_are_loadable_grafana_json_without_placeholders() -> None:
    assert DASHBOARDS, "no dashboard under deploy/grafana/dashboards"
    for path in DASHBOARDS:
        dash: dict[str, Any] = json.loads(path.read_text())
        assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 30, path.name
        panels = dash["panels"]
        ids = [p["id"] for p in panels]
        assert len(ids) == len(set(ids)), f"{path.name}: duplicate panel ids"
        for i, p in enumerate(panels):
            assert {"h", "w", "x", "y"} <= set(p["gridPos"]) and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24, p["title"]
            assert not [q["title"] for q in panels[:i] if _overlaps(q["gridPos"], p["gridPos"])], f"{p['title']} overlaps"
            if p["type"] == "row":
                assert not p.get("targets") and not p["collapsed"], f"{path.name}: row {p['title']!r}"
                continue
            assert p["targets"] and p.get("description"), f"{path.name}: panel {p['title']!r} needs a query and a description"
            assert not re.search(r"todo|tbd|placeholder|lorem", json.dumps(p), re.I), f"{path.name}: {p['title']!r}"
            assert [t["refId"] for t in p["targets"]] == [chr(65 + k) for k in range(len(p["targets"]))], p["title"]


def test_dashboard_has_a_row_per_capability_each_with_panels() -> None:
    panels = json.loads((ROOT / "deploy/grafana/dashboards/harvester.json").read_text())["panels"]
    rows: dict[str, int] = {}
    current = None
    for p in sorted(panels, key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"])):
        if p["type"] == "row":
            current = p["title"]
            rows[current] = 0
        else:
            assert current is not None, f"panel {p['title']!r} sits above the first row"
            rows[current] += 1
    assert REQUIRED_ROWS <= set(rows), f"rows: {sorted(rows)}"
    assert all(n > 0 for n in rows.values()), f"empty rows: {rows}"
