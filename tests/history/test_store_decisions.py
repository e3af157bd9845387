"""The decision log (schema version 5): appended, read newest first by subject, pruned, migrated."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from old_stores import store_file_at

from harvester.domain import DecisionRecord
from harvester.history.migrations import LATEST_VERSION
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    s: HistoryStore = SqliteHistoryStore(":memory:") if request.param == "memory" else SqliteHistoryStore(tmp_path / "h.db")
    yield s
    s.close()


def _cap(at: float, node: str, tenant: str = "web") -> DecisionRecord:
    return DecisionRecord(at, "guard", "set_capacity", node, f"cpu 8 − primary … at {at}", "sent", f"guard-{at}",
                          "<8192 MB, 6 vc>", node, tenant, "", at - 4.0, {"primary_cpu_cores": 1.5, "total": {"vcores": 16}})


def test_records_round_trip_newest_first_by_subject(store: HistoryStore) -> None:
    kill = DecisionRecord(30.0, "guard", "kill", "container_1_0002_01_000003", "allocated … > harvestable", "would send",
                          node_id="n1:1", tenant="web", app_id="application_1_0002")
    assert store.append_decisions([_cap(10.0, "n1:1"), _cap(20.0, "n2:1", "db"), kill, _cap(40.0, "n1:1")]) == 4
    assert [d.at for d in store.decisions(node_id="n1:1")] == [40.0, 30.0, 10.0]
    assert store.decisions(node_id="n1:1", limit=1)[0] == _cap(40.0, "n1:1"), "every field survives"
    assert [d.at for d in store.decisions(tenant="db")] == [20.0]
    assert store.decisions(app_ids=["application_1_0002"]) == [kill]
    assert store.decisions(app_ids=[]) == []
    assert [d.at for d in store.decisions(since=15.0, until=35.0)] == [30.0, 20.0]
    assert store.prune_decisions(25.0) == 2
    assert [d.at for d in store.decisions()] == [40.0, 30.0]


def test_a_version_4_file_migrates_to_the_decision_log(tmp_path: Path) -> None:
    s = SqliteHistoryStore(store_file_at(tmp_path / "v4.db", 4))
    try:
        assert s.schema_version() == LATEST_VERSION >= 5
        s.append_decisions([_cap(1.0, "n1:1")])
        assert len(s.decisions()) == 1
    finally:
        s.close()
