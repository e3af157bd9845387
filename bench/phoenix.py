"""Benchmark of Phoenix (paper 003): ordering a batch, and the p99 ratios in the simulator.

    .venv/bin/python bench/phoenix.py [--repeats 5] [--traces ../shared/traces] [--loads 1.5,3] [--seeds 1] [--mechanism-only]

1. Ordering 10,000 pending tasks against a 15,000-worker view: ``order``
   (decisions/constrained_placement.py steps 1-4: CRV, M/G/1 per constraint class, admission
   control, the contention order). Target: under 100 ms. Then ``decide``: the same plus the
   placement of every task with free-resource accounting (step 5). Workers carry the
   evaluation's synthetic attributes (sim/phoenix/cluster.py) with 8 vcores / 32 GB, a random
   share already used; tasks carry Table II constraints as the evaluation synthesizes them
   (sim/phoenix/synthesis.py: one type per constrained task, 9 distinct sets), 1 vcore / 2 GB each, durations from the Yahoo YH1
   short jobs. Every repeat starts from a fresh view (no constraint mask cached); medians over
   ``--repeats``. Also the one-off view build (attributes factorized into a NodeTable).
2. gRPC ``ConstrainedPlacement/PlaceTasks`` over loopback (the sidecar's real server and
   servicer) for a 100-task batch on the same 15,000 nodes: p50 / p99 in ms over 200 calls.
3. The simulator's headline: short-job p99 of Eagle-C, Hawk-C, Sparrow-C and FIFO over Phoenix's,
   geometric mean over the two Yahoo sub-traces x ``--loads`` x ``--seeds`` on 15,000 workers
   (the same runs as `harvester evaluate phoenix`, fewer seeds by default).
4. The mechanism scenario (deploy/scenarios/mechanism-phoenix.yaml, issue 27): Eagle-C p99 /
   Phoenix p99 (`mechanism_p99_ratio_vs_eagle_c`) and Eagle-C p99 with / without constraints
   (`mechanism_eagle_c_constraint_penalty`); `--mechanism-only` runs this part alone (seconds).
Merges its keys into bench/results/phoenix.json (other keys are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harvester.eval_paths import full_or_vendored_traces
from harvester.decisions.constrained_placement import PlacementContext, PlacementStrategy, TaskAsk, decide, order  # noqa: E402
from harvester.decisions.placement_view import view_of  # noqa: E402
from harvester.domain import Resources  # noqa: E402
from harvester.sim.phoenix.cluster import synthesize_workers  # noqa: E402
from harvester.sim.phoenix.evaluate import TRACE_DIR, Plan, run_plan, summary  # noqa: E402
from harvester.sim.phoenix.synthesis import synthesize  # noqa: E402
from harvester.sim.phoenix.workload import load_trace  # noqa: E402

N_WORKERS, N_TASKS = 15_000, 10_000


def _view(workers, rng: np.random.Generator):  # noqa: ANN001, ANN202
    used_vc = rng.integers(0, 9, size=workers.size)
    attrs = [dict(a) for a in workers.attributes]
    return view_of(0.0, list(workers.table.node_ids), attrs, np.full(workers.size, 32768), np.full(workers.size, 8),
                   32768 - used_vc * 4096, 8 - used_vc, np.ones(workers.size, dtype=bool))


def _tasks(workers, traces: Path, rng: np.random.Generator) -> tuple[TaskAsk, ...]:  # noqa: ANN001
    durations = np.concatenate([j.durations_s for j in load_trace(traces / TRACE_DIR / "YH1_sub.tr.gz", workers=1,
                                                                  load=None).jobs if not j.long])
    specs = synthesize(N_TASKS, workers, seed=5)
    picks = rng.choice(durations, size=N_TASKS)
    return tuple(TaskAsk(f"t{i}", Resources(2048, 1), s.constraints, (), float(d)) for i, (s, d) in enumerate(zip(specs, picks)))


def bench_order(traces: Path, repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    workers = synthesize_workers(N_WORKERS, seed=1)
    t0 = time.perf_counter()
    view = _view(workers, rng)
    build_ms = (time.perf_counter() - t0) * 1000
    tasks = _tasks(workers, traces, rng)
    def fresh() -> PlacementContext:
        # a fresh view each time (no constraint mask cached yet), built outside the timing as the
        # service builds it once per telemetry snapshot
        return PlacementContext(0.0, "bench", view_of(0.0, list(view.table.node_ids), [dict(a) for a in workers.attributes],
                                                      view.total_mb, view.total_vcores, view.free_mb, view.free_vcores,
                                                      view.usable), tasks, PlacementStrategy())

    ordering, placing, plan = [], [], None
    for _ in range(repeats):
        ctx = fresh()
        start = time.perf_counter()
        order(ctx)
        ordering.append((time.perf_counter() - start) * 1000)
        ctx = fresh()
        start = time.perf_counter()
        plan = decide(ctx)
        placing.append((time.perf_counter() - start) * 1000)
    assert plan is not None
    return {"order_10k_tasks_15k_workers_ms": statistics.median(ordering),
            "order_and_place_10k_tasks_15k_workers_ms": statistics.median(placing),
            "order_distinct_constraint_sets": float(len({t.constraints for t in tasks})),
            "view_15k_workers_build_ms": build_ms,
            "order_placed_now": float(sum(p.fits_now for p in plan.placements)),
            "order_queued": float(sum(not p.fits_now for p in plan.placements)),
            "order_relaxed": float(sum(bool(p.relaxed) for p in plan.placements)),
            "order_unplaceable": float(len(plan.unplaceable))}


def bench_grpc(calls: int) -> dict[str, float]:
    import grpc
    from prometheus_client import CollectorRegistry

    from harvester.advice.constrained_placement import placement_services
    from harvester.advice.grpc_server import GrpcServer
    from harvester.clock import SimClock
    from harvester.config import parse_settings
    from harvester.domain import ClusterSnapshot, NodeSample
    from harvester.observability.metrics import Metrics
    from harvester.v1 import common_pb2
    from harvester.v1 import constrained_placement_pb2 as pb
    from harvester.v1 import constrained_placement_pb2_grpc as pb_grpc

    rng = np.random.default_rng(2)
    nodes = tuple(NodeSample(f"node{i:05d}:8041", 0.0, "RUNNING", f"/rack{i // 40}", f"node{i:05d}", Resources(32768, 8),
                             Resources(int(u) * 4096, int(u)), int(u), None, None, None, None)
                  for i, u in enumerate(rng.integers(0, 8, size=N_WORKERS)))
    settings = parse_settings({"placement": {"node_attributes": [
        {"hostname_pattern": "[02468]$", "attributes": {"isa": "x86_64", "cores": 32}},
        {"hostname_pattern": "[13579]$", "attributes": {"isa": "aarch64", "cores": 64}}]}}, environ={})
    metrics = Metrics(CollectorRegistry())
    server = GrpcServer("127.0.0.1:0", metrics, placement_services(lambda: snapshot, SimClock(0.0), settings, metrics))
    snapshot = ClusterSnapshot(0.0, "bench", nodes)
    server.start()
    req = pb.PlaceTasksRequest(job_id="bench", tasks=[
        pb.TaskRequest(task_id=f"t{i}", resources=common_pb2.Resources(memory_mb=2048, vcores=1), expected_duration_s=30,
                       constraints=[pb.Constraint(attribute="isa", op=pb.CONSTRAINT_OP_EQ, value="aarch64")] if i % 2 else [])
        for i in range(100)])
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.ConstrainedPlacementStub(channel)
            stub.PlaceTasks(req)  # warm: the view of the snapshot is built once
            lat = []
            for _ in range(calls):
                t = time.perf_counter()
                stub.PlaceTasks(req)
                lat.append((time.perf_counter() - t) * 1000)
    finally:
        server.stop(0.1)
    return {"grpc_place_100_tasks_p50_ms": float(np.percentile(lat, 50)),
            "grpc_place_100_tasks_p99_ms": float(np.percentile(lat, 99))}


def bench_simulation(traces: Path, loads: tuple[float, ...], seeds: tuple[int, ...]) -> dict[str, float]:
    plan = Plan(traces_dir=traces, loads=loads, seeds=seeds, policies=("FIFO", "Sparrow-C", "Hawk-C", "Eagle-C", "Phoenix"))
    start = time.perf_counter()
    rows = run_plan(plan)
    figures = {k: v for k, v in summary(rows).items()}
    figures["simulation_runs"] = float(len(rows))
    figures["simulation_seconds"] = time.perf_counter() - start
    for name in ("Eagle-C", "Phoenix", "Hawk-C", "Sparrow-C", "FIFO"):
        figures[f"short_p99_s_{name}"] = float(np.mean([r.short["p99"] for r in rows if r.policy == name]))
    return figures


def bench_mechanism(traces: Path) -> dict[str, float]:
    from harvester.sim.phoenix.mechanism import load_scenario, run

    start = time.perf_counter()
    r = run(load_scenario(), traces)
    return {"mechanism_p99_ratio_vs_eagle_c": r["p99_ratio_vs_eagle_c"],
            "mechanism_eagle_c_constraint_penalty": r["eagle_c_constraint_penalty"],
            "mechanism_pressure": r["pressure"],
            "mechanism_short_p99_s_Eagle-C": r["Eagle-C"]["p99"], "mechanism_short_p99_s_Phoenix": r["Phoenix"]["p99"],
            "mechanism_short_p99_s_Eagle (no constraints)": r["Eagle (no constraints)"]["p99"],
            "mechanism_seconds": time.perf_counter() - start}


def _write(figures: dict[str, float], top: tuple[str, ...]) -> Path:
    """Merge `figures` (and the `top` keys at the top level) into bench/results/phoenix.json."""
    out = ROOT / "bench" / "results" / "phoenix.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = json.loads(out.read_text()) if out.exists() else {"name": "phoenix"}
    result.update({"name": "phoenix", "machine": {"cores": os.cpu_count(), "python": platform.python_version()}})
    result.setdefault("figures", {}).update(figures)
    result.setdefault("targets", {}).update({"mechanism_p99_ratio_vs_eagle_c": 1.9, "mechanism_eagle_c_constraint_penalty": 1.5})
    result.setdefault("commands", {})
    for k in top:
        if k in figures:
            result[k] = figures[k]
    out.write_text(json.dumps(result, indent=2) + "\n")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--grpc-calls", type=int, default=200)
    ap.add_argument("--traces", type=Path, default=full_or_vendored_traces(ROOT))
    ap.add_argument("--loads", default="1.5,3")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--mechanism-only", action="store_true", help="only the mechanism scenario (seconds)")
    args = ap.parse_args()
    command = "python bench/phoenix.py " + " ".join(sys.argv[1:])
    mech_keys = ("mechanism_p99_ratio_vs_eagle_c", "mechanism_eagle_c_constraint_penalty")
    if args.mechanism_only:
        figures = bench_mechanism(args.traces)
        out = _write(figures, mech_keys)
        data = json.loads(out.read_text())
        data["commands"]["mechanism"] = command
        out.write_text(json.dumps(data, indent=2) + "\n")
        for key, value in figures.items():
            print(f"{key:<45}  {value:12.4f}")
        print(f"wrote {out.relative_to(ROOT)}")
        return
    loads = tuple(float(x) for x in args.loads.split(","))
    seeds = tuple(int(x) for x in args.seeds.split(","))
    figures = bench_order(args.traces, args.repeats)
    figures.update(bench_grpc(args.grpc_calls))
    figures.update(bench_simulation(args.traces, loads, seeds))
    figures.update(bench_mechanism(args.traces))
    targets = {"order_10k_tasks_15k_workers_ms": 100.0, "p99_ratio_vs_eagle_c": 1.9, "mechanism_p99_ratio_vs_eagle_c": 1.9,
               "mechanism_eagle_c_constraint_penalty": 1.5}
    out = _write(figures, ("order_10k_tasks_15k_workers_ms", "p99_ratio_vs_eagle_c", "p99_ratio_vs_sparrow_c",
                           "p99_ratio_vs_hawk_c", *mech_keys))
    data = json.loads(out.read_text())
    data["command"] = command
    data["commands"]["mechanism"] = command
    out.write_text(json.dumps(data, indent=2) + "\n")
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        target = f"  (target {targets[key]:g})" if key in targets else ""
        print(f"{key:<{width}}  {value:12.4f}{target}")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
