"""`harvester whatif` works on the embedded default's store as `make run` fills it (issue 28):
the synthesized month of demo tenant slots and recurring runs (harvester/app.py), plus the
NodeManagers' first-seen sizes the first poll records."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.app import backfill_demo_history, backfill_demo_recurring, harvesting_settings
from harvester.config import load_settings
from harvester.domain import NodeBaseline
from harvester.emulator import demo
from harvester.history.sqlite import SqliteHistoryStore
from harvester.whatif import run_whatif

NOW = 1_795_920_000.0


@pytest.mark.slow
def test_whatif_on_the_synthesized_month(tmp_path: Path) -> None:
    settings = load_settings(None)
    h = harvesting_settings(settings)
    store = SqliteHistoryStore(str(tmp_path / "harvester.db"))
    backfill_demo_history(store, demo.DemoLoad(seed=settings.embedded.seed, start=NOW), NOW, h)
    backfill_demo_recurring(store, NOW, settings.embedded.seed)
    store.record_node_baselines([NodeBaseline(f"{t}-{j:02d}.demo.harvester:45454", f"{t}-{j:02d}.demo.harvester",
                                              demo.NODE, NOW) for t in demo.TENANTS for j in range(3)])
    store.close()
    doc = run_whatif(tmp_path / "harvester.db", days=0.25, policies="stock,yarn-pt,morpheus", out=tmp_path / "out",
                     processes=1, recommend=False)
    cov = doc["coverage"]
    assert cov["nodes"] == 12 and cov["tenants"] == 4 and cov["jobs"] > 0
    assert cov["from_tenant_slots"] > 0  # the synthesized month is tenant slots only
    assert doc["policies"]["yarn-pt"]["jobs_submitted"] == cov["jobs"]
    mo = doc["morpheus"]
    assert mo["measured"], mo.get("why")  # the demo's three recurring jobs run every 10-20 minutes
    # never worse than static: a job Morpheus does not reserve runs at the static baseline's level
    # (once it ran at the evaluation's synthesized user quota, 1 vcore here: 10 misses against 0)
    assert mo["morpheus"]["slo_misses"] <= mo["static"]["slo_misses"]
    assert 0 <= mo["morpheus"]["reserved_runs"] <= mo["morpheus"]["runs"]
    assert (tmp_path / "out" / "whatif.md").is_file()
