"""Benchmark of HDFS-H's pure core (hdfs_placement): refit, Algorithm 2, the durability model.

    .venv/bin/python bench/hdfs_grid.py [--repeats 5] [--calls 20000] [--grpc-calls 5000] [--sim-blocks 1000000]

1. Refit (Algorithm 2 lines 4-5) for 10,000 DataNodes of 1,000 primary tenants (heavy-tailed
   sizes, 100 racks): tenant storage sums + ``fit_grid`` + ``build_placement_table`` +
   ``PlacementIndex``. Target: under 5 s.
2. ``choose_targets`` in-process for one block, R=3, over that table: a random writer DataNode
   and 10 random excluded DataNodes per call (ids, as the plug-in passes them), 3% of nodes
   busy, one ``numpy.random.Generator`` reused across calls. p50 / p99 per call; the same
   with an int seed per call (a Generator is built inside) and on node indices
   (``choose_target_indices``, the simulator's entry point). Target: p99 under 50 µs.
3. One month of the durability model (``durability.simulate``, Grid policy, R=3) with 10,000
   servers and ``--sim-blocks`` blocks: seconds and the process's peak RSS. Target: under 60 s.
4. gRPC ``HdfsPlacement/ChooseTargets`` over loopback against the sidecar's real server
   (``GrpcServer`` + ``advice.hdfs_grpc``) serving that 10,000-DataNode table: one client
   thread, one block per call (writer + 10 excluded ids, R=3), request to response. p50 / p99
   in ms. Target: p99 under 2 ms. (The NameNode plug-in never makes this call on its hot
   path — it runs Algorithm 2 on its cached table; this bounds tools and Python clients.)
Figures 1, 2 and 4 are medians over ``--repeats`` runs; 3 runs once. Writes
bench/results/hdfs_grid.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hdfs_placement import (  # noqa: E402
    DataNode,
    PlacementIndex,
    TenantStats,
    build_placement_table,
    choose_target_indices,
    choose_targets,
    fit_grid,
    tenant_available_bytes,
)
from hdfs_placement.durability import DurabilityConfig, simulate, tenant_history, uniform_workload  # noqa: E402
from hdfs_placement.policies import GridPolicy, SimCluster  # noqa: E402
from hdfs_placement.reimage import MONTH_S, generate_reimages  # noqa: E402

N_NODES, N_TENANTS, N_RACKS = 10_000, 1_000, 100
BLOCK = 128 * 1024 * 1024
TB = 10**12


def tenant_of_servers(rng: np.random.Generator, n_servers: int, n_tenants: int) -> np.ndarray:
    """Heavy-tailed tenant sizes (10 + Pareto) scaled to ``n_servers`` servers."""
    sizes = (rng.pareto(1.5, n_tenants) * 30).astype(np.int64) + 10
    sizes = np.maximum(1, np.floor(sizes * n_servers / sizes.sum()).astype(np.int64))
    tenants = np.repeat(np.arange(n_tenants), sizes)[:n_servers]
    return np.concatenate((tenants, rng.integers(0, n_tenants, n_servers - len(tenants))))


def cluster_inputs(seed: int = 0) -> tuple[list[DataNode], dict[str, tuple[float, float]]]:
    rng = np.random.default_rng(seed)
    tenant = tenant_of_servers(rng, N_NODES, N_TENANTS)
    nodes = [
        DataNode(f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}:9866", f"dn{i:05d}", f"/rack{i % N_RACKS:03d}",
                 f"tenant-{tenant[i]:04d}", f"env-{tenant[i] // 4:04d}", 12 * TB,
                 int(rng.uniform(0.5, 10.0) * TB), bool(rng.random() < 0.03))
        for i in range(N_NODES)
    ]
    history = {f"tenant-{t:04d}": (float(rng.lognormal(-2.0, 1.3)), float(rng.uniform(0.1, 1.0))) for t in range(N_TENANTS)}
    return nodes, history


def refit(nodes: list[DataNode], history: dict[str, tuple[float, float]], version: int) -> tuple[PlacementIndex, float, float]:
    t0 = time.perf_counter()
    space = tenant_available_bytes(nodes)
    stats = [TenantStats(t, f"env-{int(t[7:]) // 4:04d}", r, p, space.get(t, 0)) for t, (r, p) in history.items()]
    t1 = time.perf_counter()
    grid = fit_grid(stats)
    fit_s = time.perf_counter() - t1
    table = build_placement_table(nodes, grid, version=version, generated_at_ms=0, busy_cpu_threshold=0.9)
    index = PlacementIndex(table)
    return index, time.perf_counter() - t0, fit_s


def latencies(call, calls: int) -> tuple[float, float]:
    lat = np.empty(calls)
    for k in range(calls):
        t0 = time.perf_counter_ns()
        call(k)
        lat[k] = time.perf_counter_ns() - t0
    return float(np.percentile(lat, 50)) / 1000.0, float(np.percentile(lat, 99)) / 1000.0


def bench_choose(index: PlacementIndex, calls: int, repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(7)
    ids = index.ids
    writers = [ids[i] for i in rng.integers(0, len(ids), calls)]
    excluded = [[ids[i] for i in rng.integers(0, len(ids), 10)] for _ in range(calls)]
    gen = np.random.default_rng(11)
    shortfall = 0

    def by_generator(k: int) -> None:
        nonlocal shortfall
        res = choose_targets(index, replication=3, block_size=BLOCK, rng=gen, writer=writers[k], excluded=excluded[k])
        shortfall += len(res.targets) != 3

    def by_seed(k: int) -> None:
        choose_targets(index, replication=3, block_size=BLOCK, rng=k, writer=writers[k], excluded=excluded[k])

    widx = [index.lookup[w] for w in writers]
    eidx = [{index.lookup[x] for x in ex} for ex in excluded]

    def by_index(k: int) -> None:
        choose_target_indices(index, 3, block_size=BLOCK, rng=gen, writer=widx[k], excluded=eidx[k])

    out: dict[str, list[float]] = {}
    latencies(by_generator, 2000)  # warm-up
    for _ in range(repeats):
        for name, fn in (("choose_targets", by_generator), ("choose_targets_int_seed", by_seed),
                         ("choose_target_indices", by_index)):
            p50, p99 = latencies(fn, calls)
            out.setdefault(f"{name}_p50_us", []).append(p50)
            out.setdefault(f"{name}_p99_us", []).append(p99)
    figures = {k: statistics.median(v) for k, v in out.items()}
    figures["choose_targets_short_answers"] = shortfall
    return figures


def bench_grpc(index: PlacementIndex, calls: int, repeats: int) -> dict[str, float]:
    """ChooseTargets through the sidecar's gRPC server on loopback (figure 4 of the docstring)."""
    import grpc
    from prometheus_client import CollectorRegistry

    from harvester.advice.grpc_server import GrpcServer
    from harvester.board.hdfs import PlacementBoard
    from harvester.advice.hdfs_grpc import hdfs_service
    from harvester.observability.metrics import Metrics
    from harvester.v1 import hdfs_placement_pb2 as pb
    from harvester.v1 import hdfs_placement_pb2_grpc as pb_grpc

    board = PlacementBoard()
    board.publish(index.table)
    metrics = Metrics(CollectorRegistry())
    server = GrpcServer("127.0.0.1:0", metrics, [hdfs_service(board, metrics, default_block_size=BLOCK, max_watch_streams=1)])
    server.start()
    rng = np.random.default_rng(13)
    ids = index.ids
    requests = [pb.ChooseTargetsRequest(writer=ids[int(w)], replication=3, block_size_bytes=BLOCK,
                                        excluded=[ids[int(i)] for i in rng.integers(0, len(ids), 10)])
                for w in rng.integers(0, len(ids), calls)]
    short = 0
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.HdfsPlacementStub(channel)

            def call(k: int) -> None:
                nonlocal short
                short += len(stub.ChooseTargets(requests[k]).targets) != 3

            latencies(call, min(2000, calls))  # warm-up: connection, threads, caches
            p50s, p99s = [], []
            for _ in range(repeats):
                p50, p99 = latencies(call, calls)
                p50s.append(p50 / 1000.0)
                p99s.append(p99 / 1000.0)
    finally:
        server.stop(0.5)
    return {"grpc_choose_targets_p50_ms": statistics.median(p50s), "grpc_choose_targets_p99_ms": statistics.median(p99s),
            "grpc_choose_targets_short_answers": short}


def bench_durability(n_blocks: int) -> dict[str, float]:
    rng = np.random.default_rng(3)
    tenant = tenant_of_servers(rng, N_NODES, N_TENANTS)
    cluster = SimCluster(tenant, np.arange(N_NODES) % N_RACKS, np.arange(N_TENANTS) // 4,
                         rng.integers(2, 12, N_NODES) * TB)
    full = generate_reimages(tenant, 2 * MONTH_S, 4)
    history, month = full.window(0, MONTH_S), full.window(MONTH_S, 2 * MONTH_S)
    steps = int(MONTH_S // 120)
    phase = rng.uniform(0, 2 * np.pi, (N_TENANTS, 1)).astype(np.float32)
    level = rng.uniform(0.05, 0.75, (N_TENANTS, 1)).astype(np.float32)
    # Daily-periodic primaries in float32 (86 MB for 1,000 tenants x a month of 2-min steps).
    util = np.sin(np.arange(steps, dtype=np.float32)[None, :] * np.float32(2 * np.pi / 720) + phase)
    util = np.clip(level + np.float32(0.2) * util, 0.0, 1.0)
    rate, peak = tenant_history(history, cluster, util)
    work = uniform_workload(n_blocks, MONTH_S, N_NODES, 5)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0 = time.perf_counter()
    policy = GridPolicy(cluster, rate, peak)
    res = simulate(cluster, work, month, util, policy, DurabilityConfig(replication=3), rng=6)
    elapsed = time.perf_counter() - t0
    return {
        "durability_month_seconds": elapsed,
        "durability_blocks": n_blocks,
        "durability_servers": N_NODES,
        "durability_reimage_events": len(month),
        "durability_replicas_destroyed": res.replicas_destroyed,
        "durability_blocks_lost": res.blocks_lost,
        "durability_rss_before_mb": rss_before,
        "durability_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--sim-blocks", type=int, default=1_000_000)
    ap.add_argument("--grpc-calls", type=int, default=5_000)
    args = ap.parse_args()

    nodes, history = cluster_inputs()
    refits, fits = [], []
    index = None
    for r in range(args.repeats):
        index, total_s, fit_s = refit(nodes, history, r + 1)
        refits.append(total_s)
        fits.append(fit_s)
    assert index is not None
    figures: dict[str, float] = {
        "refit_10k_seconds": statistics.median(refits),
        "fit_grid_1000_tenants_seconds": statistics.median(fits),
        "grid_imbalance": float(index.table.cells and max(c.available_bytes for c in index.table.cells)
                                / (sum(c.available_bytes for c in index.table.cells) / 9) - 1.0),
    }
    figures.update(bench_choose(index, args.calls, args.repeats))
    figures.update(bench_grpc(index, args.grpc_calls, args.repeats))
    figures.update(bench_durability(args.sim_blocks))
    targets = {"choose_targets_p99_us": 50.0, "refit_10k_seconds": 5.0, "durability_month_seconds": 60.0,
               "grpc_choose_targets_p99_ms": 2.0}
    result = {
        "name": "hdfs_grid",
        "command": "python bench/hdfs_grid.py " + " ".join(sys.argv[1:]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "figures": figures,
        "targets": targets,
        "choose_targets_p99_us": figures["choose_targets_p99_us"],
        "refit_10k_seconds": figures["refit_10k_seconds"],
        "grpc_choose_targets_p99_ms": figures["grpc_choose_targets_p99_ms"],
    }
    out = ROOT / "bench" / "results" / "hdfs_grid.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        target = f"  (target {targets[key]:g})" if key in targets else ""
        print(f"{key:<{width}}  {value:12.4f}{target}" if isinstance(value, float) else f"{key:<{width}}  {value:12d}{target}")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
