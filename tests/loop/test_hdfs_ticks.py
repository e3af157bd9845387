"""HDFS-H's ticks (loop/hdfs_placement.py) on a SimClock with the memory store and a NameNode
whose answers are beans shaped like the recorded 3.3.6 NameNodeInfo."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from harvester.board.hdfs import PlacementBoard
from harvester.clock import SimClock
from harvester.config import parse_settings
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.hdfs_placement import HdfsPlacementLoop
from harvester.loop.runner import ControlLoop
from harvester.models.tenant_slots import TenantSlot
from harvester.observability.metrics import Metrics
from harvester.telemetry.namenode_model import NameNodeInfo, parse_namenode_info
from nn_fakes import DN, info_doc

DAY = 86400.0
T0 = 1_800_000_000.0
TB = 10**12


class StubNameNode:
    """In-process NameNode: `namenode_info()` parses the current bean (the HTTP path is tested elsewhere)."""

    def __init__(self, nodes: list[DN]) -> None:
        self.nodes = nodes
        self.calls = 0

    def namenode_info(self) -> NameNodeInfo:
        self.calls += 1
        return parse_namenode_info(info_doc(self.nodes), "http://nn:9870")


def fleet(wiped: str | None = None) -> list[DN]:
    out = []
    for t, n in (("web", 4), ("db", 3), ("etl", 2)):
        for i in range(n):
            host = f"{t}-{i}"
            out.append(DN(host, f"10.0.{len(out)}.1", rack=f"/r{i % 2}", remaining=3 * TB,
                          blocks=0 if host == wiped else 2000))
    out.append(DN("stray-0", "10.0.99.1", admin_state="Decommission In Progress"))
    return out


def settings(tmp_path: Path, **hdfs):
    return parse_settings({
        "harvesting": {"tenants": [{"tenant": t, "environment": f"{t}-env", "hostname_pattern": f"^{t}-"}
                                   for t in ("web", "db", "etl")]},
        "hdfs": {"enabled": True, "namenode_urls": ["http://nn:9870"], "min_version_interval_s": 60,
                 "min_observed_days": 1, **hdfs},
        "store": {"backend": "memory"},
    }, environ={})


def slots(store: SqliteHistoryStore, tenant: str, util: float, start: float, n: int) -> None:
    store.add_tenant_slots([TenantSlot(tenant, start + k * 120.0, util, 1, 3) for k in range(n)])


@pytest.fixture()
def rig(tmp_path: Path):
    clock = SimClock(T0)
    store = SqliteHistoryStore(":memory:")
    for t, u in (("web", 0.6), ("db", 0.2), ("etl", 0.4)):
        slots(store, t, u, T0 - 2 * DAY, 720)  # a day of history, two days ago
    nn = StubNameNode(fleet())
    board = PlacementBoard()
    metrics = Metrics(CollectorRegistry())
    s = settings(tmp_path)
    loop = HdfsPlacementLoop(hdfs=s.hdfs, harvesting=s.harvesting, namenode=nn, store=store, board=board, metrics=metrics)
    poll = ControlLoop("hdfs-poll", 30, loop.poll, clock, metrics)
    refit = ControlLoop("hdfs-refit", DAY, loop.refit, clock, metrics)
    return clock, store, nn, board, metrics, loop, poll, refit, s


def test_first_poll_fits_a_grid_and_publishes_version_1(rig) -> None:
    clock, store, nn, board, metrics, loop, poll, _, _ = rig
    result = poll.run_once()
    assert result is not None, poll.status()["last_error"]
    pub = board.current()
    assert pub.version == 1 and pub.table.grid_version == 1
    assert len(pub.table.datanodes) == 9, "the decommissioning DataNode is not listed"
    assert {e.tenant for e in pub.table.datanodes} == {"web", "db", "etl"}
    assert {e.environment for e in pub.table.datanodes} == {"web-env", "db-env", "etl-env"}
    grid = store.hdfs_grid()
    peaks = {t.stats.tenant: (t.stats.peak_cpu, t.stats.cpu_source) for t in grid.tenants}
    assert peaks == {"web": (pytest.approx(0.6), "history"), "db": (pytest.approx(0.2), "history"),
                     "etl": (pytest.approx(0.4), "history")}
    assert {t.stats.reimage_source for t in grid.tenants} == {"default"}, "just started: too little observation"
    assert [(v.version, v.reasons) for v in store.hdfs_table_versions()] == [(1, ("first table",))]
    assert metrics.registry.get_sample_value("harvester_hdfs_table_version") == 1
    assert result.summary["refit"]["cpu_source"] == "tenant_slots"


def test_busy_flags_bump_the_version_once_the_interval_has_passed(rig) -> None:
    clock, store, nn, board, _, _, poll, _, _ = rig
    poll.run_once()
    slots(store, "web", 0.97, clock.now(), 1)
    clock.advance(30)
    poll.run_once()
    assert board.current().version == 1, "soft change within min_version_interval_s: deferred"
    clock.advance(40)
    slots(store, "web", 0.95, clock.now(), 1)
    poll.run_once()
    pub = board.current()
    assert pub.version == 2
    assert {e.hostname for e in pub.table.datanodes if e.busy} == {f"web-{i}" for i in range(4)}
    assert store.hdfs_table_versions()[0].reasons[0].startswith("busy flags:")


def test_a_wiped_datanode_is_recorded_and_the_refit_counts_it(rig) -> None:
    clock, store, nn, board, _, _, poll, refit, _ = rig
    poll.run_once()
    clock.advance(2 * DAY)
    poll.run_once()
    nn.nodes = fleet(wiped="etl-1")
    clock.advance(30)
    poll.run_once()
    (event,) = store.hdfs_reimages(since=0)
    assert (event.hostname, event.tenant, event.source) == ("etl-1", "etl", "jmx")
    clock.advance(30)
    assert refit.run_once() is not None
    grid = store.hdfs_grid()
    etl = next(t.stats for t in grid.tenants if t.stats.tenant == "etl")
    assert grid.version == 2 and etl.reimage_events == 1 and etl.reimage_source == "history"
    assert etl.reimages_per_server_month == pytest.approx(1 / (etl.observed_server_days / 30))
    assert board.current().table.grid_version == 2
    assert store.hdfs_table_versions()[0].reasons[0] == "grid refit: version 1 -> 2"


def test_the_operator_log_counts_and_a_bad_log_fails_the_refit_loudly(rig, tmp_path: Path) -> None:
    clock, store, nn, board, metrics, _, _, _, _ = rig
    log = tmp_path / "reimages.csv"
    log.write_text("timestamp,hostname\n" + "".join(f"{T0 - 3 * DAY + k},db-{k % 3}\n" for k in range(6)))
    s = settings(tmp_path, reimage_log=str(log))
    loop = HdfsPlacementLoop(hdfs=s.hdfs, harvesting=s.harvesting, namenode=nn, store=store, board=board, metrics=metrics)
    loop.refit(clock.now())
    db = next(t.stats for t in store.hdfs_grid().tenants if t.stats.tenant == "db")
    assert (db.reimage_events, db.reimage_source) == (6, "history")
    assert db.reimages_per_server_month == pytest.approx(6 / 3), "the log covers the window: 6 events / 3 servers / 1 month"
    log.write_text("timestamp,hostname\nlast tuesday,db-0\n")
    refit = ControlLoop("hdfs-refit", DAY, loop.refit, clock, metrics)
    assert refit.run_once() is None and "reimages.csv:2" in refit.status()["last_error"]
    assert store.hdfs_grid().version == 1, "the previous grid stays"


def test_a_restart_continues_versions_and_keeps_the_grid(rig) -> None:
    clock, store, nn, _, metrics, _, poll, _, s = rig
    poll.run_once()
    board2 = PlacementBoard()
    again = HdfsPlacementLoop(hdfs=s.hdfs, harvesting=s.harvesting, namenode=nn, store=store, board=board2,
                              metrics=metrics)
    clock.advance(30)
    again.poll(clock.now())
    pub = board2.current()
    assert (pub.version, pub.table.grid_version) == (2, 1), "no refit on restart; versions keep increasing"


def test_a_namenode_failure_fails_the_tick_and_keeps_the_table(rig) -> None:
    from harvester.telemetry.namenode_jmx import NameNodeJmxError

    clock, _, nn, board, _, _, poll, _, _ = rig
    poll.run_once()

    def down() -> NameNodeInfo:
        raise NameNodeJmxError("GET http://nn:9870/jmx: cannot connect")

    nn.namenode_info = down
    clock.advance(30)
    assert poll.run_once() is None and "cannot connect" in poll.status()["last_error"]
    assert board.current().version == 1


def test_the_telemetry_observer_refreshes_busy_flags_without_asking_the_namenode(rig) -> None:
    clock, store, nn, board, _, loop, poll, _, _ = rig
    assert loop.on_telemetry(clock.now()) == {}, "nothing before the first poll"
    poll.run_once()
    calls = nn.calls
    clock.advance(90)
    slots(store, "db", 0.99, clock.now(), 1)
    assert loop.on_telemetry(clock.now()) == {"hdfs_table_version": 2}
    assert nn.calls == calls
    assert {e.tenant for e in board.current().table.datanodes if e.busy} == {"db"}
    assert loop.on_telemetry(clock.now() + 1) == {}, "nothing new: no version"


def one_host_fleet(wiped_port: int | None = None) -> list[DN]:
    """Three DataNodes on one host (as on the single-host 3.3.6 cluster: LiveNodes keys
    `box:9866`, `box:9867`, `box:9868`, one IP), plus a DataNode of its own on another host."""
    return [DN("box", "10.0.0.5", port=p, blocks=0 if p == wiped_port else 2000) for p in (9866, 9867, 9868)] + \
        [DN("web-0", "10.0.1.1", blocks=2000)]


def one_host_settings(**hdfs):
    by_address = {"web": ["10.0.0.5:9866", "web-0"], "db": ["10.0.0.5:9867"], "etl": ["10.0.0.5:9868"]}
    return parse_settings({
        "harvesting": {"tenants": [{"tenant": t, "environment": f"{t}-env", "nodes": nodes}
                                   for t, nodes in by_address.items()]},
        "hdfs": {"enabled": True, "namenode_urls": ["http://nn:9870"], "min_version_interval_s": 60,
                 "min_observed_days": 1, **hdfs},
        "store": {"backend": "memory"},
    }, environ={})


def test_datanodes_sharing_a_host_belong_to_the_tenants_their_addresses_name() -> None:
    clock = SimClock(T0)
    store = SqliteHistoryStore(":memory:")
    for t, u in (("web", 0.6), ("db", 0.2), ("etl", 0.4)):
        slots(store, t, u, T0 - 2 * DAY, 720)
    nn, board = StubNameNode(one_host_fleet()), PlacementBoard()
    s = one_host_settings()
    loop = HdfsPlacementLoop(hdfs=s.hdfs, harvesting=s.harvesting, namenode=nn, store=store, board=board,
                             metrics=Metrics(CollectorRegistry()))
    loop.poll(clock.now())
    table = board.current().table
    owners = {e.datanode_id: (e.tenant, e.environment) for e in table.datanodes}
    assert owners == {"10.0.0.5:9866": ("web", "web-env"), "10.0.0.5:9867": ("db", "db-env"),
                      "10.0.0.5:9868": ("etl", "etl-env"), "10.0.1.1:9866": ("web", "web-env")}
    cells = {e.tenant: (e.row, e.col) for e in table.datanodes}
    assert len(set(cells.values())) == 3, f"one tenant per cell (peaks 0.2/0.4/0.6 differ): {cells}"
    fitted = {t.stats.tenant: t.stats.datanodes for t in store.hdfs_grid().tenants}
    assert fitted == {"web": 2, "db": 1, "etl": 1}, "each DataNode counts for its own tenant"

    clock.advance(2 * DAY)
    loop.poll(clock.now())
    nn.nodes = one_host_fleet(wiped_port=9867)
    clock.advance(30)
    loop.poll(clock.now())
    (event,) = store.hdfs_reimages(since=0)
    assert (event.datanode_id, event.tenant) == ("10.0.0.5:9867", "db"), "the wiped DataNode's tenant, not the host's"
    clock.advance(30)
    loop.refit(clock.now())
    stats = {t.stats.tenant: t.stats for t in store.hdfs_grid().tenants}
    assert {t: r.reimage_events for t, r in stats.items()} == {"web": 0, "db": 1, "etl": 0}
    assert stats["db"].observed_server_days == pytest.approx(2 + 60 / DAY), "one DataNode watched 2 days"
    assert stats["web"].observed_server_days == pytest.approx(2 * (2 + 60 / DAY)), "two DataNodes of web"


def test_an_operator_log_line_naming_a_host_counts_for_every_datanode_on_it(tmp_path: Path) -> None:
    log = tmp_path / "reimages.csv"
    log.write_text(f"timestamp,hostname\n{T0 - 3 * DAY},box\n{T0 - 2 * DAY},web-0\n")
    store = SqliteHistoryStore(":memory:")
    s = one_host_settings(reimage_log=str(log))
    loop = HdfsPlacementLoop(hdfs=s.hdfs, harvesting=s.harvesting, namenode=StubNameNode(one_host_fleet()),
                             store=store, board=PlacementBoard(), metrics=Metrics(CollectorRegistry()))
    loop.refit(T0)
    counts = {t.stats.tenant: t.stats.reimage_events for t in store.hdfs_grid().tenants}
    assert counts == {"web": 2, "db": 1, "etl": 1}, "a reimaged host wipes each of its DataNodes"
