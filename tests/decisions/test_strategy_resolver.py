"""Per-node rules and overrides resolve into one concrete strategy (DESIGN.md principle 10)."""

from __future__ import annotations

import pytest

from harvester.config import parse_settings
from harvester.decisions.strategy import (
    KillMechanism, NodeIdentity, class_params, guard_strategy, reserve_policy, resolve_nodes, selection_strategy,
)
from harvester.domain import Resources
from harvester.models.job_history import JobType
from harvester.models.patterns import Pattern


def settings(harvesting: dict):
    return parse_settings({"harvesting": harvesting}, environ={}).harvesting


H = settings({
    "tenants": [
        {"tenant": "ranking", "environment": "search", "hostname_pattern": r"^rank-\d+"},
        {"tenant": "crawler", "environment": "crawl", "nodes": ["crawl-01", "x:45454"]},
        {"tenant": "catch-rank", "hostname_pattern": "rank"},
    ],
    "node_resources": {
        "physical_cores": 16, "vcores": 32, "memory_mb": 65536,
        "overrides": [
            {"hostname_pattern": "^rank-", "physical_cores": 32},
            {"nodes": ["rank-7"], "vcores": 64, "host_memory_mb": 262144},
        ],
    },
})


def test_first_matching_rule_wins_and_overrides_apply_in_order() -> None:
    nodes = [NodeIdentity("rank-7:1", "rank-7"), NodeIdentity("rank-8:1", "rank-8"), NodeIdentity("x:45454", "x"),
             NodeIdentity("myrank:1", "myrank"), NodeIdentity("other:1", "other")]
    got, left = resolve_nodes(H, nodes)
    assert left == {}
    r7, r8 = got["rank-7:1"], got["rank-8:1"]
    assert (r7.tenant, r7.environment, r7.physical_cores, r7.capacity, r7.host_memory_mb) == (
        "ranking", "search", 32.0, Resources(65536, 64), 262144)
    assert (r8.physical_cores, r8.capacity.vcores, r8.host_memory_mb) == (32.0, 32, None)
    assert got["x:45454"].tenant == "crawler" and got["myrank:1"].tenant == "catch-rank"
    assert got["other:1"].tenant == "other", "unmatched nodes are their own tenant"
    assert r7.vcores_per_core == 2.0


def test_unknown_sizes_fall_back_to_telemetry_or_leave_the_node_out() -> None:
    h = settings({"unmatched_nodes": "ignore", "tenants": [{"tenant": "t", "hostname_pattern": "."}]})
    got, left = resolve_nodes(h, [
        NodeIdentity("a:1", "a", baseline=Resources(8192, 8), physical_cores=2.0),
        NodeIdentity("b:1", "b", baseline=Resources(8192, 8)),
        NodeIdentity("c:1", "c", physical_cores=4.0),
    ])
    assert got["a:1"].capacity == Resources(8192, 8) and got["a:1"].physical_cores == 2.0
    assert "physical cores unknown" in left["b:1"] and "capacity unknown" in left["c:1"]
    ignored = settings({"unmatched_nodes": "ignore"})
    assert "no tenant rule" in resolve_nodes(ignored, [NodeIdentity("z:1", "z")])[1]["z:1"]


def test_strategies_from_settings() -> None:
    h = settings({"guard": {"kill_mechanism": "signals", "min_interval_s": 5}, "reserve": {"memory_fraction": 0.2},
                  "weights": {"long": {"constant": 9, "periodic": 1, "unpredictable": 0}}})
    g = guard_strategy(h, telemetry_stale_after_s=42.0)
    assert g.kill_mechanism is KillMechanism.SIGNALS and g.min_interval_s == 5 and g.stale_after_s == 42.0
    assert g.memory_reserve_fraction == 0.2
    s = selection_strategy(h)
    assert s.weights[JobType.LONG][Pattern.CONSTANT] == 9 and s.weights[JobType.SHORT][Pattern.UNPREDICTABLE] == 3
    assert (s.fallback_thresholds.short_below_s, s.fallback_thresholds.long_from_s) == (300.0, 3600.0)
    p = class_params(h)
    assert p.patterns.step_s == 120.0 and p.max_k == 8 and p.patterns.periodic_min_share == 0.2
    assert reserve_policy(h).cold_start == 0.2


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"tenants": [{"tenant": "t"}]}, "give nodes or hostname_pattern"),
        ({"tenants": [{"tenant": "t", "hostname_pattern": "("}]}, "invalid regular expression"),
        ({"reserve": {"floor": 0.6, "cap": 0.5}}, "floor"),
        ({"guard": {"kill_mechanism": "nuke"}}, "harvesting.guard.kill_mechanism"),
        ({"job_length": {"short_quantile": 0.8, "long_quantile": 0.2}}, "short_quantile"),
    ],
)
def test_bad_harvesting_settings_name_the_key(section: dict, message: str) -> None:
    from harvester.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        settings(section)


def test_environment_override_reaches_the_guard() -> None:
    s = parse_settings({}, environ={"HARVESTER_HARVESTING__GUARD__KILL_MECHANISM": "signals_with_backstop"})
    assert s.harvesting.guard.kill_mechanism == "signals_with_backstop"
