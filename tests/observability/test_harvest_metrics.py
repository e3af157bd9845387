"""Harvesting metrics are recorded through record_* helpers into an injected registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from harvester.decisions.guard import evaluate
from harvester.observability.metrics import Metrics

from harvesting_builders import context, node_strategy, sample, snapshot


def test_guard_decision_feeds_the_harvest_families() -> None:
    m = Metrics(CollectorRegistry())
    d = evaluate(context(snapshot([sample("n1:1", node_cpu=5.2)]), [node_strategy("n1:1"), node_strategy("n2:1")]))
    m.record_harvest(d.harvested_vcores_by_node(), d.harvested_vcores_by_class())
    m.record_capacity_outcomes(d.outcomes())
    m.record_kills({"signal_graceful": 2})
    m.record_reserves({"periodic-0": 0.125})
    m.record_decision("guard", 0.01)
    m.record_class_model(4, {"periodic": 2}, {"periodic": 30})
    get = m.registry.get_sample_value
    assert get("harvester_harvest_node_vcores", {"node": "n1:1"}) == 8
    assert get("harvester_harvest_class_vcores", {"class_id": "periodic-0"}) == 8
    assert get("harvester_harvest_capacity_updates_total", {"outcome": "sent", "reason": "decrease"}) == 1
    assert get("harvester_harvest_capacity_updates_total", {"outcome": "stale", "reason": "missing"}) == 1
    assert get("harvester_harvest_stale_nodes", {"why": "missing"}) == 1
    assert get("harvester_harvest_kills_total", {"reason": "signal_graceful"}) == 2
    assert get("harvester_harvest_reserve_fraction", {"class_id": "periodic-0"}) == 0.125
    assert get("harvester_harvest_decision_duration_seconds_count", {"decision": "guard"}) == 1
    assert get("harvester_harvest_model_version") == 4 and get("harvester_harvest_tenants", {"pattern": "periodic"}) == 30
    # a node that disappears from the next decision disappears from the gauge
    m.record_harvest({}, {})
    assert get("harvester_harvest_node_vcores", {"node": "n1:1"}) is None
