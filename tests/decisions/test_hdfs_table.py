"""When a new placement table version is published (decisions/hdfs_table.py)."""

from __future__ import annotations

import pytest

from harvester.decisions.hdfs_table import busy_flags, datanodes_of, next_table
from harvester.telemetry.namenode_model import parse_namenode_info
from hdfs_placement import DataNode, TenantStats, fit_grid
from nn_fakes import DN, info_doc

TB = 10**12
GRID = fit_grid([TenantStats(t, t, r, p, 10 * TB) for t, r, p in
                 (("web", 0.1, 0.9), ("db", 0.5, 0.2), ("etl", 2.0, 0.5))])
REFIT = fit_grid([TenantStats(t, t, r, p, 10 * TB) for t, r, p in
                  (("web", 3.0, 0.9), ("db", 0.5, 0.2), ("etl", 0.1, 0.5))])


def nodes(busy: set[str] = frozenset(), remaining: int = 5 * TB, extra: bool = False) -> list[DataNode]:
    out = [DataNode(f"10.0.0.{i}:9866", f"h{i}", "/r1", t, t, 10 * TB, remaining, t in busy)
           for i, t in enumerate(("web", "db", "etl"))]
    if extra:
        out.append(DataNode("10.0.0.9:9866", "h9", "/r2", "web", "web", 10 * TB, remaining))
    return out


def decide(published, datanodes, *, grid=GRID, grid_version=1, now_ms=1_000_000, version=None, min_interval_s=30.0):
    v = version if version is not None else (published.version + 1 if published else 1)
    return next_table(published, datanodes, grid, grid_version, version=v, now_ms=now_ms, busy_cpu_threshold=0.9,
                      free_space_change=0.05, min_interval_s=min_interval_s)


def test_first_table_then_nothing_when_nothing_changed() -> None:
    first = decide(None, nodes())
    assert first.kind == "structural" and first.reasons == ("first table",) and first.table.version == 1
    assert first.table.grid_version == 1
    again = decide(first.table, nodes(remaining=5 * TB - 10**9), now_ms=9_000_000)
    assert again.table is None and again.kind == "unchanged", "1 GB of 10 TB is below the 5 % threshold"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (dict(datanodes=nodes(extra=True)), "datanodes joined: 10.0.0.9:9866"),
        (dict(datanodes=nodes()[:2]), "datanodes left: 10.0.0.2:9866"),
        (dict(datanodes=nodes(), grid=REFIT, grid_version=2), "grid refit: version 1 -> 2"),
    ],
)
def test_structural_changes_publish_at_once(change: dict, reason: str) -> None:
    first = decide(None, nodes()).table
    d = decide(first, now_ms=first.generated_at_ms + 1, **change)
    assert d.kind == "structural" and d.table.version == 2 and any(r.startswith(reason) for r in d.reasons)


def test_a_refit_that_moves_a_tenant_names_the_moved_datanodes() -> None:
    first = decide(None, nodes()).table
    d = decide(first, nodes(), grid=REFIT, grid_version=2, now_ms=first.generated_at_ms + 1)
    assert any(r.startswith("datanodes changed host/rack/tenant/cell") for r in d.reasons)


def test_soft_changes_wait_for_the_interval_then_publish_current_values() -> None:
    first = decide(None, nodes()).table
    early = decide(first, nodes(busy={"db"}), now_ms=first.generated_at_ms + 10_000)
    assert early.table is None and early.deferred
    assert early.reasons[0].startswith("busy flags: 10.0.0.1:9866->busy") and "waiting" in early.reasons[-1]
    late = decide(first, nodes(busy={"db"}, remaining=3 * TB), now_ms=first.generated_at_ms + 31_000)
    assert late.kind == "soft" and late.table.version == 2
    assert [e.busy for e in late.table.datanodes] == [False, True, False]
    assert {e.remaining_bytes for e in late.table.datanodes} == {3 * TB}
    assert any(r.startswith("free space moved > 0.05 of capacity") for r in late.reasons)


def test_busy_flags_have_hysteresis_and_need_evidence() -> None:
    flags = busy_flags({"web": 0.95, "db": 0.5}, {}, threshold=0.9, clear_below=0.8)
    assert flags == {"web": True, "db": False}
    flags = busy_flags({"web": 0.85, "db": 0.9}, flags, threshold=0.9, clear_below=0.8)
    assert flags == {"web": True, "db": False}, "web stays busy above clear_below; exactly the threshold is not busy"
    assert busy_flags({"web": 0.79}, flags, threshold=0.9, clear_below=0.8) == {"web": False}
    assert busy_flags({}, {"web": True}, threshold=0.9, clear_below=0.8) == {}, "no CPU evidence: not busy"


def test_datanodes_from_jmx_with_owners_and_unclaimed_hosts() -> None:
    info = parse_namenode_info(info_doc([DN("web-1", "10.0.0.1", rack="/r1"), DN("web-1", "10.0.0.1", port=9867, rack="/r1"),
                                         DN("stray", "10.0.0.7", rack="")]), "nn")
    got = datanodes_of(info.live, {"10.0.0.1:9866": ("web", ""), "10.0.0.1:9867": ("db", "db-env")}, {"web": True})
    assert [(d.id, d.hostname, d.tenant, d.environment, d.rack, d.busy) for d in got] == [
        ("10.0.0.1:9866", "web-1", "web", "web", "/r1", True),
        ("10.0.0.1:9867", "web-1", "db", "db-env", "/r1", False),
        ("10.0.0.7:9866", "stray", "stray", "stray", "/default-rack", False),
    ], "owners are keyed by DataNode id: two DataNodes of host web-1 keep their own tenants"
