"""The simulated cluster written as live settings (sim/live.py): every server resolves, through
the live resolver (decisions/strategy.py), to its tenant and its own size."""

from __future__ import annotations

import numpy as np

from harvester.decisions.strategy import NodeIdentity, resolve_nodes
from harvester.domain import Resources
from harvester.sim.live import cluster_settings, harvesting_settings
from harvester.sim.policies import SimContext, TenantInfo


def test_heterogeneous_servers_get_their_own_size_and_tenant() -> None:
    ids = tuple(f"n{i}.sim:8041" for i in range(5))
    ctx = SimContext(ids, np.array([0, 0, 1, 1, 1]), (TenantInfo(0, "web", "prod", "web", 2), TenantInfo(1, "db", "prod", "db", 3)),
                     np.array([16.0, 16.0, 8.0, 16.0, 16.0]), np.array([16, 16, 8, 16, 16]),
                     np.array([65536, 65536, 32768, 65536, 65536]), 120.0, 0.0, 1)
    h = cluster_settings(harvesting_settings({"reserve": {"floor": 0.1}}, 120.0), ctx)
    assert h.actuate is True and h.reserve.floor == 0.1 and h.unmatched_nodes == "ignore"
    nodes, left_out = resolve_nodes(h, [NodeIdentity(i, i.split(":")[0]) for i in ids])
    assert not left_out
    assert {i: n.tenant for i, n in nodes.items()} == dict(zip(ids, ["web", "web", "db", "db", "db"]))
    assert nodes["n2.sim:8041"].physical_cores == 8.0 and nodes["n2.sim:8041"].capacity == Resources(32768, 8)
    assert nodes["n3.sim:8041"].capacity == Resources(65536, 16) and nodes["n3.sim:8041"].host_memory_mb == 65536
