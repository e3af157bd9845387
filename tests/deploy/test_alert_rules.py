"""The alert rules are valid, unit-tested by promtool, and tuned to the compose sidecar's settings.

`promtool check rules` / `promtool test rules` come from Debian's `prometheus` package (.ci/run
installs it; elsewhere these tests skip with the reason). Which alerts the promtool tests cover
is checked here without promtool: every alert of alerts.yml must have a case where it fires and
a case where it stays quiet.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from harvester.app import Harvester
from harvester.config import Settings
from ports import on_free_ports

from deploy_files import ROOT, prometheus_binary

PROM_DIR = ROOT / "deploy" / "prometheus"
ALERTS = PROM_DIR / "alerts.yml"
ALERT_TESTS = PROM_DIR / "alerts_test.yml"
PROMETHEUS_CONFIG = PROM_DIR / "prometheus.yml"


def _rules() -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]}


def _promtool(*args: str, cwd: Path = PROM_DIR) -> subprocess.CompletedProcess[str]:
    return subprocess.run([prometheus_binary("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_promtool_check_rules() -> None:
    out = _promtool("check", "rules", ALERTS.name)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in out.stdout


def test_promtool_unit_tests_pass() -> None:
    out = _promtool("test", "rules", ALERT_TESTS.name)
    assert out.returncode == 0, out.stdout + out.stderr


def test_promtool_check_config(tmp_path: Path) -> None:
    """prometheus.yml as compose mounts it: its rule file at the repository's path instead."""
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    assert [Path(f).name for f in config["rule_files"]] == [ALERTS.name]
    config["rule_files"] = [str(ALERTS)]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    out = _promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    fires: set[str] = set()
    quiet: set[str] = set()
    suite = yaml.safe_load(ALERT_TESTS.read_text())
    assert suite["rule_files"] == [ALERTS.name]
    for case in suite["tests"]:
        for check in case.get("alert_rule_test", []):
            (fires if check["exp_alerts"] else quiet).add(check["alertname"])
    rules = set(_rules())
    assert fires | quiet <= rules, f"alerts_test.yml tests unknown alerts: {sorted((fires | quiet) - rules)}"
    assert rules <= fires, f"alerts never shown firing: {sorted(rules - fires)}"
    assert rules <= quiet, f"alerts never shown quiet: {sorted(rules - quiet)}"


def test_alert_rules_are_complete_and_unique() -> None:
    names = [r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]
    assert len(names) == len(set(names)), f"duplicate alert names: {names}"
    for name, rule in _rules().items():
        assert rule["labels"]["severity"] in {"warning", "critical"}, name
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
        assert re.fullmatch(r"\d+[smh]", rule["for"]), name


def test_stale_telemetry_alert_uses_the_sidecars_threshold(compose_settings: Settings) -> None:
    m = re.fullmatch(r"\s*harvester_telemetry_age_seconds\s*>\s*([0-9.]+)\s*", _rules()["HarvesterTelemetryStale"]["expr"])
    assert m, "HarvesterTelemetryStale must be `harvester_telemetry_age_seconds > <telemetry.stale_after_s>`"
    assert float(m.group(1)) == compose_settings.telemetry.stale_after_s


LAST_TICK_RE = re.compile(r'\s*time\(\)\s*-\s*harvester_loop_last_tick_timestamp_seconds\{loop="([\w-]+)"\}\s*>\s*([0-9.]+)\s*')


def test_loop_age_alerts_fire_past_three_intervals_of_the_compose_sidecar(compose_settings: Settings) -> None:
    """Three intervals without a good tick is when /readyz calls a loop unhealthy (ControlLoop.healthy)."""
    settings = on_free_ports(compose_settings.model_copy(
        update={"store": compose_settings.store.model_copy(update={"backend": "memory"})}))
    app = Harvester(settings)  # built, never started
    intervals = {loop.name: loop.interval_s for loop in app.loops}
    app.stop()
    checked = {}
    for name, rule in _rules().items():
        m = LAST_TICK_RE.fullmatch(rule["expr"])
        if m:
            loop, threshold = m.group(1), float(m.group(2))
            assert loop in intervals, f"{name}: the compose sidecar has no loop {loop!r} ({sorted(intervals)})"
            assert threshold == 3 * intervals[loop], f"{name}: {threshold} s, 3 intervals of {loop} = {3 * intervals[loop]} s"
            checked[name] = loop
    assert set(checked.values()) >= {"guard", "node-ordering", "hdfs-poll"}, checked
