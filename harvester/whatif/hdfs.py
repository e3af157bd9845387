"""HDFS-H vs stock placement on the recorded DataNodes and reimages (OSDI'16 §4.2, §6; issue 28).

The durability model and the two policies are hdfs_placement's, exactly as `harvester hdfs
evaluate` runs them (harvester/sim/evaluate_hdfs.py): `GridPolicy` (Algorithm 2 on a grid fitted
to the PAST: each tenant's reimages per server per month and peak CPU before the replay) against
`StockHdfsPolicy` (BlockPlacementPolicyDefault), replication 3, re-replication after 15 minutes,
busy above 90 % CPU. What comes from the store: the DataNodes (hosts; their tenant is the
NodeManager's on the same host, else the reimage record's), the recorded reimages (one event per
instant; before the replay they are the grid's history, during it what the blocks live through),
each tenant's primary CPU (the replay's load, inputs.py). What does not: the blocks written —
the evaluation's uniform writes, `BLOCKS_PER_SERVER` per DataNode over the replay, from random
DataNodes — and the free space (the evaluation's: R=3 fills `FILL_AT_R3` of it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harvester.sim.given import GivenInputs
from harvester.whatif.recorded import Recorded

BLOCKS_PER_SERVER = 100
FILL_AT_R3 = 0.6
SEED = 1


def _log(times: np.ndarray, servers: np.ndarray, tenant_of: np.ndarray, n: int, start: float, end: float):  # type: ignore[no-untyped-def]
    from hdfs_placement.reimage import ReimageLog

    keep = (times >= start) & (times < end)
    t, s = times[keep] - start, servers[keep]
    order = np.lexsort((s, t))
    t, s = t[order], s[order]
    uniq, first = np.unique(t, return_index=True)
    offsets = np.r_[first, len(t)].astype(np.int64)
    return ReimageLog(uniq.astype(np.float64), offsets, s.astype(np.int64),
                      tenant_of[s[first]].astype(np.int64) if len(t) else np.zeros(0, dtype=np.int64), n, end - start)


def compare(rec: Recorded, given: GivenInputs) -> dict[str, Any]:
    """Grid vs stock on the recorded DataNodes and reimages (module docstring)."""
    from hdfs_placement.durability import BLOCK_BYTES, DurabilityConfig, simulate, tenant_history, uniform_workload
    from hdfs_placement.policies import GridPolicy, SimCluster, StockHdfsPolicy

    if not rec.reimages:
        return {"measured": False, "why": "the store holds no reimage history (hdfs.enabled with a NameNode, or "
                                          "hdfs.reimage_log): HDFS-H's gain is in surviving reimages"}
    by_host = {n.hostname: i for i, n in enumerate(rec.nodes)}
    hosts = sorted({d.hostname for d in rec.datanodes.values()}) or [n.hostname for n in rec.nodes]
    names = [t.name for t in given.load.tenants]
    tenant_of, racks = [], []
    for h in hosts:
        i = by_host.get(h)
        if i is None:
            t = next((e.tenant for e in rec.reimages if e.hostname == h and e.tenant), h)
            if t not in names:
                names.append(t)
            tenant_of.append(names.index(t))
            racks.append("/default-rack")
        else:
            tenant_of.append(int(given.load.tenant_of[i]))
            racks.append(rec.nodes[i].rack)
    tenant = np.asarray(tenant_of, dtype=np.int64)
    rack_ids = {r: k for k, r in enumerate(sorted(set(racks)))}
    index = {h: k for k, h in enumerate(hosts)}
    events = [(e.time, index[e.hostname]) for e in rec.reimages if e.hostname in index]
    if not events:
        return {"measured": False, "why": "no recorded reimage is of a known DataNode host"}
    times = np.asarray([e[0] for e in events], dtype=np.float64)
    servers = np.asarray([e[1] for e in events], dtype=np.int64)
    n = len(hosts)
    rng = np.random.default_rng(SEED)
    blocks = BLOCKS_PER_SERVER * n
    cluster = SimCluster(tenant, np.asarray([rack_ids[r] for r in racks]), np.arange(len(names)),
                         (BLOCK_BYTES * 3 * blocks / (FILL_AT_R3 * n) * rng.uniform(0.5, 1.5, n)).astype(np.int64))
    load = given.load
    steps = load.history_steps + rec.replay_slots
    node_tenant_util = np.zeros((len(names), steps), dtype=np.float32)
    for t in range(len(load.tenants)):
        rows = np.flatnonzero(load.tenant_of == t)
        node_tenant_util[t] = load.rows[rows, :steps].mean(axis=0)
    past_util, util = node_tenant_util[:, :load.history_steps], node_tenant_util[:, load.history_steps:]
    past = _log(times, servers, tenant, n, rec.past_start, rec.replay_start)
    month = _log(times, servers, tenant, n, rec.replay_start, rec.end)
    if past_util.shape[1] == 0:
        past_util = util
    rate, peak = tenant_history(past, cluster, past_util)
    writes = uniform_workload(blocks, rec.end - rec.replay_start, n, rng)
    config = DurabilityConfig(replication=3, util_step_s=rec.step_s)
    out: dict[str, Any] = {"measured": True, "datanodes": n, "reimages_past": int(len(past.servers)),
                           "reimages_replay": int(len(month.servers)), "blocks_written_per_policy": blocks}
    for name, policy in (("grid", GridPolicy(cluster, rate, peak)), ("stock", StockHdfsPolicy(cluster))):
        res = simulate(cluster, writes, month, util, policy, config, np.random.default_rng([SEED, 3]))
        out[name] = {"blocks_written": res.blocks_written, "blocks_lost": res.blocks_lost,
                     "blocks_ever_unavailable": res.blocks_ever_unavailable,
                     "unavailable_block_minutes": res.block_unavailable_minutes, "write_failures": res.write_failures}
    g, s = out["grid"], out["stock"]
    out["markdown"] = [
        f"{n} DataNodes, {out['reimages_past']} recorded server reimages before the replay (the grid's history) and "
        f"{out['reimages_replay']} during it; {blocks:,} blocks written uniformly (R=3; writes and free space are the "
        "evaluation's, not recorded).", "",
        "| placement | blocks lost | blocks ever unavailable | unavailable block-minutes |", "|---|---:|---:|---:|",
        f"| HDFS-H grid | {g['blocks_lost']} | {g['blocks_ever_unavailable']} | {g['unavailable_block_minutes']:,.0f} |",
        f"| stock HDFS | {s['blocks_lost']} | {s['blocks_ever_unavailable']} | {s['unavailable_block_minutes']:,.0f} |"]
    return out
