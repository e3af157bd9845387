"""Rows for the `harvester rm ...` tables, from recorded answers, and the unit helpers."""

from __future__ import annotations

from dataclasses import replace

import json
from pathlib import Path

import pytest

from rm_client import Node, Resource, ResourceUtilization
from rm_client.tables import apps_table, duration, gb, nodes_table, queues_table, reservations_table
from rm_client.units import containers_vcores_to_physical_cores, host_cpu_breakdown, vcores_per_physical_core
from rm_client.wire.apps import decode_apps
from rm_client.wire.nodes import decode_nodes
from rm_client.wire.reservations import decode_reservation_list
from rm_client.wire.scheduler import decode_scheduler


@pytest.fixture()
def captures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "yarn-3.3.6" / "captures"


def load(captures: Path, name: str) -> object:
    return json.loads((captures / f"{name}.json").read_text())


@pytest.mark.parametrize("ms, text", [(0, "0s"), (45_000, "45s"), (185_000, "3m05s"), (3_720_000, "1h02m"),
                                      (90_061_000, "1d1h"), (-1, "-"), (None, "-")])
def test_duration(ms: int | None, text: str) -> None:
    assert duration(ms) == text


def test_gb() -> None:
    assert (gb(8192), gb(1536), gb(-2048), gb(None)) == ("8.0", "1.5", "-2.0", "-")


def test_nodes_table(captures: Path) -> None:
    nodes = decode_nodes(load(captures, "nodes-running"))
    t = nodes_table(nodes, now_ms=1795420811063 + 65_000)
    assert t.headers[0] == "NODE" and len(t.rows) == 2
    row = dict(zip(t.headers, t.rows[1], strict=True))  # sorted by id: localhost:45455 second
    assert row["NODE"] == "localhost:45455"
    assert row["MEM USED/TOTAL GB"] == "1.5/8.0" and row["VCORES USED/TOTAL"] == "3/8"
    assert row["MEM AVAIL GB"] == "6.5" and row["VCORES AVAIL"] == "5"
    assert row["HOST CPU cores"] == "0.08" and row["CONTAINERS CPU vcores"] == "0.03"
    assert row["HEALTH AGE"] == "1m05s"
    assert all(len(r) == len(t.headers) and all(isinstance(c, str) for c in r) for r in t.rows)


def test_apps_table_shows_finished_allocations_as_dash(captures: Path) -> None:
    t = apps_table(decode_apps(load(captures, "apps-final")))
    assert [r[0] for r in t.rows] == ["application_1795421445306_0003", "application_1795421445306_0002"]
    row = dict(zip(t.headers, t.rows[0], strict=True))
    assert row["STATE"] == "FINISHED" and row["CONTAINERS"] == "-" and row["MEM GB"] == "-"
    running = dict(zip(t.headers, apps_table(decode_apps(load(captures, "apps-running"))).rows[0], strict=True))
    assert running["MEM GB"] == "2.5" and running["VCORES"] == "5" and running["PROGRESS"] == "0.0%"


def test_reservations_table(captures: Path) -> None:
    res = decode_reservation_list(load(captures, "reservation-list-two"))
    arrival = 1795420991339  # res_all_once
    t = reservations_table(res, now_ms=arrival - 60_000)
    rows = {r[0]: dict(zip(t.headers, r, strict=True)) for r in t.rows}
    once = rows["reservation_1795420810582_0002"]
    assert once["RECURRENCE"] == "once" and once["STATUS"] == "starts in 1m00s" and once["INTERPRETER"] == "R_ALL"
    assert once["REQUESTS"] == "4x<1.0 GB,1vc> (gang 4) 15m00s"
    hourly = rows["reservation_1795420810582_0001"]
    assert hourly["RECURRENCE"] == "1h00m" and hourly["INTERPRETER"] == "R_ORDER_NO_GAP"
    assert hourly["ARRIVAL UTC"].startswith("2026-11-23 ")
    later = {r[0]: r[-1] for r in reservations_table(res, now_ms=1795421891339 + 1).rows}
    assert later["reservation_1795420810582_0002"] == "allocated now"


def test_a_zero_resource_range_of_a_recurring_reservation_is_a_gap_not_an_allocation(captures: Path) -> None:
    """3.3.6 lists the time between held ranges as a zero-resource allocation (a live 1-hour
    recurring reservation whose 10 minutes wrap the hour showed a 50-minute <0, 0> range)."""
    import dataclasses

    from rm_client.wire.reservations import ResourceAllocation

    (hourly,) = [r for r in decode_reservation_list(load(captures, "reservation-list-two"))
                 if r.definition.recurrence_period_ms == 3_600_000]
    minute = 60_000
    wrapped = dataclasses.replace(hourly, allocations=(
        ResourceAllocation(Resource(1024, 1), 0, 5 * minute), ResourceAllocation(Resource(0, 0), 5 * minute, 55 * minute),
        ResourceAllocation(Resource(1024, 1), 55 * minute, 60 * minute)))
    in_gap = 1_795_420_800_000 - 1_795_420_800_000 % 3_600_000 + 30 * minute
    assert [(a.start_ms % 3_600_000, a.resource.memory_mb) for a in wrapped.allocation_windows(in_gap)] == \
        [(0, 1024), (55 * minute, 1024)]
    assert reservations_table([wrapped], now_ms=in_gap).rows[0][-1] == "every 1h00m"
    assert reservations_table([wrapped], now_ms=in_gap + 27 * minute).rows[0][-1] == "allocated now"


def test_queues_table_indents_the_tree(captures: Path) -> None:
    t = queues_table(decode_scheduler(load(captures, "scheduler-with-app-in-reservation")))
    names = [r[0] for r in t.rows]
    assert names == ["root", "  default", "    root.default-default", "    reservation_1795420810582_0001"]
    kinds = [r[1] for r in t.rows]
    assert kinds == ["root", "parent", "leaf", "reservation"]
    assert t.rows[2][3] == "81.2%"  # capacity 81.25, one decimal (round half to even)


def test_queues_table_labels_what_each_percentage_is_of(captures: Path) -> None:
    """Issue 25: "USED 1300.0%" in the first seconds of `make run`. The RM's usedCapacity is % of the
    queue's OWN capacity (a leaf of 10240 MB using 1024 MB shows 10.0 while 6.25 % of the cluster,
    captures scheduler-with-wrong-queue-apps), absoluteUsedCapacity % of the cluster's CURRENT
    capacity — which the guard lowers — and the root reports only the former (of the cluster)."""
    t = queues_table(decode_scheduler(load(captures, "scheduler-with-wrong-queue-apps")))
    assert t.headers[3:8] == ("CAP OF PARENT", "USED OF CAP", "MAX OF PARENT", "CAP OF CLUSTER", "USED OF CLUSTER")
    rows = {r[0].strip(): dict(zip(t.headers, r)) for r in t.rows}
    assert rows["root.default-default"]["USED OF CAP"] == "10.0%" and rows["root.default-default"]["USED OF CLUSTER"] == "6.2%"
    assert rows["root"]["CAP OF CLUSTER"] == "100.0%" and rows["root"]["USED OF CLUSTER"] == "6.2%", "the root is the cluster"
    assert any("% of the queue's own capacity" in n for n in t.notes) and not any("over-committed" in n for n in t.notes)
    info = decode_scheduler(load(captures, "scheduler-running"))
    assert info.root is not None
    over = queues_table(replace(info, root=replace(info.root, used_capacity_percent=1300.0)))
    assert any("1300.0 % of the cluster's current capacity" in n and "over-committed" in n for n in over.notes), over.notes


def test_units_conversion_matches_the_nodemanager_formula() -> None:
    assert vcores_per_physical_core(8, 2) == 4.0
    assert vcores_per_physical_core(8, 2, cpu_limit_percent=50) == 8.0
    assert containers_vcores_to_physical_cores(3.8, nm_vcores=8, host_physical_cores=2) == pytest.approx(0.95)
    with pytest.raises(ValueError):
        vcores_per_physical_core(0, 2)


def _node(node_id: str, host: str, node_cpu: float, containers_vc: float, util_pct: float) -> Node:
    ru = ResourceUtilization(1500, 1500, node_cpu, 100, 100, containers_vc)
    return Node(id=node_id, rack="/r", state="RUNNING", host_name=host, http_address="", last_health_update_ms=0,
                version="3.3.6", health_report="", num_containers=1, used_memory_mb=0, avail_memory_mb=0,
                used_vcores=0, avail_vcores=0, cpu_utilization_percent=util_pct, resource_utilization=ru)


def test_host_breakdown_counts_a_host_once_and_sums_its_nodemanagers() -> None:
    nodes = [_node("h1:1", "h1", 6.0, 8.0, 75.0), _node("h1:2", "h1", 6.0, 4.0, 75.0), _node("h2:1", "h2", 1.0, 0, 12.5)]
    out = host_cpu_breakdown(nodes, nm_vcores=16)
    assert out["h1"].physical_cores == 8.0 and out["h1"].total == 6.0
    assert out["h1"].containers == pytest.approx((8.0 + 4.0) * 8 / 16)
    assert out["h1"].primary == pytest.approx(0.0)
    assert out["h2"].primary == pytest.approx(1.0)
    with pytest.raises(ValueError, match="h1:2"):
        host_cpu_breakdown(nodes, nm_vcores={"h1:1": 16})
