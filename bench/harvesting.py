"""Benchmark of YARN-H phase A: classify tenants, Algorithm 1 over gRPC, one guard cycle.

    .venv/bin/python bench/harvesting.py [--repeats 3] [--tenants 5000] [--calls 2000]

1. Classification (OSDI'16 §3.2/§4.1): `fit` over 5,000 tenants × 30 days of 2-minute samples
   (21,600 each, float32; a third daily-periodic, a third flat, a third random walks, 2 % of
   samples missing). Target: under 60 s. The fit of the margins (paper 004 §4) is timed too.
2. SelectClasses over 100 classes through a real gRPC server on loopback (one call at a time,
   unseeded, like a client would): p50 / p99 per call. Target: p99 under 1 ms. `--only select`
   runs it alone at `--classes` (default 1,000; issue 29): `select_classes_p99_ms_1000_classes`;
   with `--only guard,select` it is timed again while a guard loop over `--nodes` ticks every
   `--control-period` s in the same process (`..._guard_<k>k_ticking`: the loops running; each
   tick republishes the classes, as the guard does). `--advice-process` serves it as
   `server.grpc_advice_process: true` does (keys end in `_advice_process`; the Python client
   then shares this process's interpreter lock with the guard: read the native figures), and
   `--advice-cpus 0` pins it to CPU 0, this process to the others and the native client to CPU 0
   (it stands for the RM, which runs elsewhere):
       .venv/bin/python bench/harvesting.py --only guard,select --nodes 50000 --ticks 2 --calls 20000 \
           --repeats 1 --advice-process --advice-cpus 0
3. The guard at `--nodes` (issue 29: 50,000; target under 1 s): the WHOLE loop tick
   (`GuardLoopRig`: NodeRegistry, evaluate, actuator, action log and decision-log sink, class
   states and the board, metrics; rm_overcommit, the default) — `guard_cycle_<k>k_nodes_seconds`
   is the median wall time of `--ticks` steady-state ticks (pushed capacities applied, every
   node's CPU moving), `_cpu_seconds` the tick thread's CPU time (less sensitive to a loaded
   host), `guard_first_tick_*` the first tick (every node new), `guard_full_gc_*` the full
   garbage collection between ticks (the telemetry poll that builds a snapshot pays it: untimed
   in the tick); and `evaluate` alone on 4 containers per node, signals mode, a tenth of the nodes
   spiking into their reserve (`guard_evaluate_<k>k_nodes_seconds`, the item before issue 29).
       .venv/bin/python bench/harvesting.py --only guard,select --nodes 50000
4. The reaction-time reserve fit (issues 16, 29; models/rise_summary.py) from raw samples of
   `--nodes` nodes × `--reserve-days` days at 3 s through a SQLite store on disk, day by day as
   the sidecar does it: the day's primary vectors are written (untimed) and pruned to the raw
   retention, then a fresh child process folds the new samples into the per-tenant daily
   summaries and fits the margins (bench/_reserve_fit.py); `--reserve-tenants` tenants in 20
   classes, H = 20 s. Figures: the sum of the daily fits (`reserve_fit_<n>k_nodes_<d>d_seconds`,
   every rise folded once; `..._cpu_seconds` their CPU, both threads, less sensitive to a loaded
   machine, with `reserve_fit_<n>k_load_1min_max` the highest load seen at a fit's start), the
   largest child peak RSS (`reserve_fit_<n>k_peak_rss_mb`) and the largest WAL a fit starts
   from (`reserve_store_wal_mb_max_<n>k`).
   Targets (issue 29, 50,000 nodes × 7 days): under 300 s and under 2,000 MB. `--only reserve`
   runs item 4 alone:
       nice .venv/bin/python bench/harvesting.py --only reserve --nodes 50000 --reserve-days 7
5. Algorithm 1 where its premise holds (issue 27, bench/_harvesting_mechanism.py): yarn-h vs
   yarn-pt on deploy/scenarios/mechanism-alg1.yaml (seeds 1, 2): figures
   `mechanism_yarn_h_vs_pt_job_time_ratio`, `mechanism_yarn_h_vs_pt_kills_ratio`. `--dial` adds
   the premise dial (docs/evaluation/img/harvesting-premise-dial.png), `--real` the real traces'
   place on it (needs `--traces`). `--mechanism-only` runs item 5 alone:
       .venv/bin/python bench/harvesting.py --mechanism-only --dial --real --traces ../../shared/traces
Figures are medians over `--repeats` runs. Merges its keys into bench/results/harvesting.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import grpc
import numpy as np
from prometheus_client import CollectorRegistry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harvester.advice.advice_process import AdviceProcess  # noqa: E402
from harvester.advice.grpc_server import GrpcServer  # noqa: E402
from harvester.config_server import TlsSettings  # noqa: E402
from harvester.decisions.strategy import DEFAULT_SELECTION  # noqa: E402
from harvester.board import Board  # noqa: E402
from harvester.board.harvesting import HarvestingBoard  # noqa: E402
from harvester.advice.yarn_advisor import yarn_advisor_service  # noqa: E402
from harvester.decisions.class_selection import ClassState  # noqa: E402
from harvester.decisions.guard import GuardContext, evaluate  # noqa: E402
from harvester.decisions.reserve import ReserveTable  # noqa: E402
from harvester.decisions.strategy import GuardStrategy, KillMechanism, NodeStrategy  # noqa: E402
from harvester.domain import ClusterSnapshot, ContainerInfo, NodeSample, Resources, SetNodeCapacity  # noqa: E402
from harvester.models.margins import fit_margins  # noqa: E402
from harvester.models.patterns import Pattern  # noqa: E402
from harvester.models.tenant_series import TenantSeries  # noqa: E402
from harvester.models.utilization_classes import TenantAssignment, TenantClassModel, UtilizationClass, fit  # noqa: E402
from harvester.observability.metrics import Metrics  # noqa: E402
from harvester.v1 import common_pb2, yarn_advisor_pb2, yarn_advisor_pb2_grpc  # noqa: E402
from grpc_health.v1 import health_pb2  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import _native_client  # noqa: E402  (a helper: `make bench` runs bench/[a-z]*.py only)

STEP = 120.0
SAMPLES = 30 * 720


def synthetic_tenants(n: int, seed: int = 0) -> TenantSeries:
    rng = np.random.default_rng(seed)
    t = np.arange(SAMPLES) * STEP
    day = np.sin(2 * np.pi * t / 86400).astype(np.float32)
    x = np.empty((n, SAMPLES), dtype=np.float32)
    base = rng.uniform(0.05, 0.6, n).astype(np.float32)
    for lo in range(0, n, 250):
        hi = min(n, lo + 250)
        block = base[lo:hi, None] + rng.normal(0, 0.01, (hi - lo, SAMPLES)).astype(np.float32)
        kind = np.arange(lo, hi) % 3
        block[kind == 0] += 0.25 * day
        walks = np.cumsum(rng.normal(0, 0.003, (int((kind == 2).sum()), SAMPLES)), axis=1).astype(np.float32)
        block[kind == 2] += walks - walks.mean(axis=1, keepdims=True)
        block[rng.random(block.shape) < 0.02] = np.nan
        x[lo:hi] = block
    return TenantSeries(tuple(f"tenant-{i:05d}" for i in range(n)), x, STEP, 0.0)


def bench_classify(n: int, repeats: int) -> dict[str, float]:
    series = synthetic_tenants(n)
    fits, margins, classes = [], [], 0
    for r in range(repeats):
        t0 = time.perf_counter()
        model = fit(series, version=r + 1, fitted_at=0.0)
        fits.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        fit_margins(series, model.tenant_class_map(), quantile=0.95)
        margins.append(time.perf_counter() - t0)
        classes = len(model.classes)
    return {"classify_seconds": statistics.median(fits), "margins_seconds": statistics.median(margins), "classes": classes}


def select_state(n_classes: int) -> HarvestingBoard:
    """A board with a model of `n_classes` classes and their current state, as refit and guard publish them."""
    patterns = list(Pattern)
    rng = np.random.default_rng(1)
    classes = tuple(
        ClassState(f"{patterns[i % 3].value}-{i}", patterns[i % 3], float(a), float(a + rng.uniform(0, 0.3)),
                   float(a + rng.uniform(-0.1, 0.1)), Resources(16 * 65536, 16 * 32), Resources(8192, 4), 0.1, nodes=16)
        for i, a in enumerate(rng.uniform(0.05, 0.6, n_classes))
    )
    model = TenantClassModel(1, 0.0, tuple(UtilizationClass(c.class_id, c.pattern, c.average, c.peak, 1, 1.0) for c in classes),
                             tuple(TenantAssignment(f"t{i}", c.class_id, c.pattern, c.average, c.peak, 0.0, 0.0, 1)
                                   for i, c in enumerate(classes)))
    state = HarvestingBoard(Board())
    state.publish_model(model, ReserveTable(), {})
    state.publish_classes(classes)
    return state


def bench_select(calls: int, repeats: int, n_classes: int = 100, advice_process: bool = False,
                 advice_cpus: frozenset[int] = frozenset(), state: HarvestingBoard | None = None) -> dict[str, float]:
    """SelectClasses over `n_classes` through the real gRPC server: p50/p99 per call as a Python
    client sees it (`p50_ms`, `p99_ms`), as a native client sees it (`native_*`, bench/_native_client.py;
    `native_empty_*`: the standard health Check on the same server, the transport's own floor),
    and the servicer's time inside the server (`handler_*`: decode done to answer built; in this
    process only). `advice_process`: served as `server.grpc_advice_process: true` serves it — by
    the advice process (advice/advice_process.py) from its mirror of this process's board;
    `advice_cpus` (server.grpc_advice_cpus): it runs there, this process on the other CPUs, and
    the native client — standing for the RM, which runs on another machine — on the advice CPUs.
    `state`: the board to serve (`select_state`), when the caller republishes its classes."""
    state = state or select_state(n_classes)
    service = yarn_advisor_service(state)
    handler_s: list[float] = []
    decide = service.servicer.SelectClasses

    def timed(request, context):  # noqa: ANN001, ANN202 (gRPC's handler signature)
        t0 = time.perf_counter()
        try:
            return decide(request, context)
        finally:
            handler_s.append(time.perf_counter() - t0)

    service.servicer.SelectClasses = timed  # registered below: the server calls the timed one
    metrics = Metrics(CollectorRegistry())
    server: GrpcServer | AdviceProcess
    if advice_process:
        server = AdviceProcess("127.0.0.1:0", metrics, [service], state, selection=DEFAULT_SELECTION, tls=TlsSettings(),
                               cpus=advice_cpus)
    else:
        server = GrpcServer("127.0.0.1:0", metrics, [service])
    server.start()
    channel = grpc.insecure_channel(server.address)
    stub = yarn_advisor_pb2_grpc.YarnAdvisorStub(channel)
    req = yarn_advisor_pb2.SelectClassesRequest(job_name="bench", max_concurrent_containers=200,
                                                container=common_pb2.Resources(memory_mb=2048, vcores=1))
    native, why = _native_client.build()
    if native is None:
        print(f"select: no native client ({why}); Python client figures only", flush=True)
    figures: dict[str, list[float]] = {}

    def add(prefix: str, lat_ms: np.ndarray | list[float]) -> None:
        figures.setdefault(f"{prefix}p50_ms", []).append(float(np.percentile(lat_ms, 50)))
        figures.setdefault(f"{prefix}p99_ms", []).append(float(np.percentile(lat_ms, 99)))

    try:
        if isinstance(server, AdviceProcess) and not server.sync():
            raise SystemExit("select: the advice process did not take the published classes")
        for _ in range(200):
            stub.SelectClasses(req)
        for _ in range(repeats):
            lat = []
            handler_s.clear()
            for _ in range(calls):
                t0 = time.perf_counter()
                stub.SelectClasses(req)
                lat.append((time.perf_counter() - t0) * 1000)
            add("", lat)
            if handler_s:
                add("handler_", np.array(handler_s) * 1000)
            if native is not None:
                add("native_", _native_client.latencies_ms(native, server.address, "/harvester.v1.YarnAdvisor/SelectClasses",
                                                           req.SerializeToString(), calls, cpus=advice_cpus))
                add("native_empty_", _native_client.latencies_ms(native, server.address, "/grpc.health.v1.Health/Check",
                                                                 health_pb2.HealthCheckRequest().SerializeToString(), calls,
                                                                 cpus=advice_cpus))
    finally:
        channel.close()
        server.stop(0.1)
    return {k: statistics.median(v) for k, v in figures.items()}


def select_figures(select: dict[str, float], key: str) -> dict[str, float]:
    """bench_select's figures under issue 29's names: `select_classes_p99_ms_<key>` (Python client),
    `select_classes_native_p99_ms_<key>`, `empty_call_native_p99_ms_<key>`, `select_classes_handler_p99_ms_<key>`."""
    names = {"": "select_classes_", "native_": "select_classes_native_", "native_empty_": "empty_call_native_",
             "handler_": "select_classes_handler_"}
    return {f"{names[prefix]}{q}_ms_{key}": select[f"{prefix}{q}_ms"]
            for prefix in names for q in ("p50", "p99") if f"{prefix}{q}_ms" in select}


def guard_context(n_nodes: int, now: float = 1e6) -> GuardContext:
    rng = np.random.default_rng(2)
    nodes, samples, containers = {}, [], []
    cpu = rng.uniform(1, 10, n_nodes)
    cpu[rng.random(n_nodes) < 0.1] = 15.0  # a tenth spike into the reserve
    for i in range(n_nodes):
        nid = f"node-{i:05d}.dc:8041"
        nodes[nid] = NodeStrategy(nid, nid[:-5], f"tenant-{i % 500}", "prod", 16.0, Resources(65536, 32))
        cs = [ContainerInfo(f"container_{i}_{j}", "application_1_0001", nid, Resources(4096, 2), now - 100 * (j + 1), j == 0, j % 2)
              for j in range(4)]
        containers += cs
        samples.append(NodeSample(nid, now - 3, "RUNNING", "/r", nid[:-5], Resources(65536, 16), Resources(16384, 8), 4,
                                  float(cpu[i]), 2.0, 30000.0, 10000.0))
    snap = ClusterSnapshot(now - 1, "bench", tuple(samples), tuple(containers), True)
    tenant_class = {f"tenant-{k}": f"class-{k % 20}" for k in range(500)}
    reserves = ReserveTable({f"class-{k}": 0.1 for k in range(20)}, {f"class-{k}": "bench" for k in range(20)})
    return GuardContext(now, snap, nodes, tenant_class, reserves, GuardStrategy(kill_mechanism=KillMechanism.SIGNALS))


def bench_guard(n_nodes: int, repeats: int) -> dict[str, float]:
    ctx = guard_context(n_nodes)
    times, actions = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        d = evaluate(ctx)
        times.append(time.perf_counter() - t0)
        actions = len(d.actions)
    return {"seconds": statistics.median(times), "actions": actions}


class GuardLoopRig:
    """The guard LOOP at scale (issue 29): `guard_context`'s cluster behind the real tick —
    NodeRegistry (tenant rules, baselines), the published class model and reserves, evaluate,
    the recording actuator, the action log and decision-log sink (SQLite, in memory), the board
    (class states for Algorithm 1) and the metrics. Between ticks the RM "applies" what was sent
    (the next snapshot's node totals are the pushed capacities) and every node's CPU moves by a
    random step, so a tick decides on new data like a live one; building that snapshot is not timed."""

    def __init__(self, n_nodes: int, mechanism: KillMechanism = KillMechanism.RM_OVERCOMMIT, seed: int = 3) -> None:
        from dataclasses import replace

        from harvester.actuators.recording import RecordingActuator
        from harvester.config_harvesting import HarvestingSettings
        from harvester.decisions.strategy import guard_strategy
        from harvester.history.sqlite import SqliteHistoryStore
        from harvester.loop.guard import GuardTick
        from harvester.loop.harvest_nodes import NodeRegistry

        self._replace = replace
        ctx = guard_context(n_nodes)
        self.snap, self.now = ctx.snapshot, ctx.now
        self.rng = np.random.default_rng(seed)
        by_tenant: dict[str, list[str]] = {}
        for nid, ns in ctx.nodes.items():
            by_tenant.setdefault(ns.tenant, []).append(nid)
        h = HarvestingSettings.model_validate({
            "tenants": [{"tenant": t, "nodes": ids} for t, ids in by_tenant.items()],
            "node_resources": {"physical_cores": 16, "vcores": 32, "memory_mb": 65536},
            "guard": {"kill_mechanism": mechanism.value}})
        store = SqliteHistoryStore(":memory:")
        self.registry = NodeRegistry(store, h)
        self.board = HarvestingBoard(Board())
        patterns = list(Pattern)
        classes = tuple(UtilizationClass(f"class-{k}", patterns[k % 3], 0.3, 0.5, 25, 1.0) for k in range(20))
        self.board.publish_model(TenantClassModel(1, 0.0, classes, tuple(
            TenantAssignment(t, c, patterns[int(c.split("-")[1]) % 3], 0.3, 0.5, 0.0, 0.0, 1)
            for t, c in ctx.tenant_class.items())), ctx.reserves, {})
        self.actuator = RecordingActuator()
        self.tick_ = GuardTick(lambda: self.snap, self.registry, self.board, self.actuator, Metrics(CollectorRegistry()),
                               guard_strategy(h, telemetry_stale_after_s=30.0), record=store.append_decisions)
        self.registry.observe(self.snap)
        self.k = 0

    def advance(self, period_s: float = 5.0) -> None:
        """The next snapshot: pushed capacities applied, CPU moved (untimed)."""
        pushed = {a.node_id: a.resources for a in self.actuator.actions if isinstance(a, SetNodeCapacity)}
        self.actuator.batches.clear()
        cpu = self.rng.normal(0, 0.2, len(self.snap.nodes))
        nodes = tuple(self._replace(n, time=n.time + period_s, total=pushed.get(n.node_id, n.total),
                                    node_cpu_cores=float(np.clip(n.node_cpu_cores + d, 0.5, 16.0)))
                      for n, d in zip(self.snap.nodes, cpu.tolist()))
        self.snap = self._replace(self.snap, time=self.snap.time + period_s, nodes=nodes)
        self.now += period_s
        t0 = time.perf_counter()
        gc.collect()  # the poll that built the snapshot pays for collecting the last one (reported apart)
        self.gc_seconds = time.perf_counter() - t0

    def tick(self) -> tuple[float, float, int]:
        """One timed loop tick: (wall seconds, this thread's CPU seconds, actions sent)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        result = self.tick_.tick(self.now)
        return time.perf_counter() - t0, time.thread_time() - c0, int(result.summary.get("sent", 0))


def bench_guard_loop(n_nodes: int, ticks: int, mechanism: KillMechanism = KillMechanism.RM_OVERCOMMIT
                     ) -> dict[str, float]:
    """The whole guard tick at `n_nodes`: the first (every node new, most send) and the median of
    the `ticks` that follow (steady state: pushed capacities applied, CPU moving)."""
    rig = GuardLoopRig(n_nodes, mechanism)
    gc.collect()
    first, first_cpu, first_sent = rig.tick()
    times, cpus, sent, gcs = [], [], [], []
    for _ in range(ticks):
        rig.advance()
        gcs.append(rig.gc_seconds)
        seconds, cpu, n_sent = rig.tick()
        times.append(seconds)
        cpus.append(cpu)
        sent.append(n_sent)
    return {"first_tick_seconds": first, "first_tick_cpu_seconds": first_cpu, "first_tick_sent": first_sent,
            "seconds": statistics.median(times), "cpu_seconds": statistics.median(cpus), "max_seconds": max(times),
            "sent_median": statistics.median(sent), "full_gc_seconds": statistics.median(gcs)}


def bench_reserve_fit(n_nodes: int, days: float, interval_s: float, tenants: int = 2000) -> dict[str, float]:
    """Item 4 of the module docstring (bench/_reserve_fit.py): seconds and peak RSS (MB) through the store."""
    sys.path.insert(0, str(ROOT / "bench"))
    import _reserve_fit  # a helper: `make bench` runs bench/[a-z]*.py only

    return _reserve_fit.run(n_nodes, days, interval_s, tenants=tenants)


def reserve_figures(r: dict[str, float], nodes: int, days: float) -> dict[str, float]:
    n, d = f"{nodes // 1000}k", f"{days:g}d"
    return {f"reserve_fit_{n}_nodes_{d}_seconds": r["seconds"], f"reserve_fit_{n}_nodes_{d}_cpu_seconds": r["cpu_seconds"],
            f"reserve_fit_{n}_load_1min_max": r["load_max"], f"reserve_fit_{n}_peak_rss_mb": r["peak_rss_mb"],
            f"reserve_fit_{n}_daily_refit_max_seconds": r["refit_max_seconds"],
            f"reserve_store_write_{n}_nodes_{d}_seconds": r["write_seconds"],
            "raw_sample_bytes_per_node_day_3s": r["raw_bytes_per_node_day"],
            f"reserve_store_disk_gb_max_{n}": r["disk_bytes_max"] / 1e9, f"reserve_store_wal_mb_max_{n}": r["wal_bytes_max"] / 1e6,
            "reserve_fit_values": r["values"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tenants", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--reserve-days", type=float, default=7.0, help="days of 3-s raw samples for the reserve fit")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "harvesting.json")
    ap.add_argument("--mechanism-only", action="store_true", help="run only item 5 (Algorithm 1's mechanism scenario)")
    ap.add_argument("--dial", action="store_true", help="item 5 also sweeps the premise dial and plots it")
    ap.add_argument("--real", action="store_true", help="item 5 also runs the real-trace scenario with and without noise")
    ap.add_argument("--traces", default=os.environ.get("HARVESTER_TRACES_DIR"), help="folder of the real traces (--real)")
    ap.add_argument("--processes", type=int, default=2, help="simulation workers of item 5")
    ap.add_argument("--runs", type=Path, default=None, help="save and reuse item 5's runs here")
    ap.add_argument("--plot", type=Path, default=ROOT / "docs" / "evaluation" / "img" / "harvesting-premise-dial.png")
    ap.add_argument("--reserve-tenants", type=int, default=2000, help="tenants of the reserve fit's nodes (item 4)")
    ap.add_argument("--only", default="", help="comma-separated items to run alone: guard (the loop tick at --nodes), "
                    "select (SelectClasses at --classes); merged into the JSON like the others")
    ap.add_argument("--classes", type=int, default=1000, help="classes of the SelectClasses item of --only select")
    ap.add_argument("--control-period", type=float, default=5.0,
                    help="with --only guard,select: SelectClasses is timed again while the guard ticks this often")
    ap.add_argument("--ticks", type=int, default=8, help="steady-state guard ticks timed after the first (--only guard)")
    ap.add_argument("--advice-process", action="store_true",
                    help="--only select: SelectClasses answered by the advice process (server.grpc_advice_process: "
                         "true), the guard ticking in this one; figures' keys end in _advice_process")
    ap.add_argument("--advice-cpus", default="",
                    help="with --advice-process: comma-separated CPUs of the advice process (server.grpc_advice_cpus); "
                         "this process runs on the others, the native client on these; keys end in _cpus_<list>")
    ap.add_argument("--switch-interval", type=float, default=None,
                    help="sys.setswitchinterval (s) for this process: how long a thread waiting for the GIL (the "
                         "gRPC server's) waits for the one holding it (the guard's); Python's default is 0.005")
    args = ap.parse_args(argv)
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    command = " ".join(["python", "bench/harvesting.py", *(argv if argv is not None else sys.argv[1:])])
    if args.only:
        return write_merged(args.out, command, only_figures(args), {}, label=f"only:{args.only}")
    if args.mechanism_only:
        return write_merged(args.out, command, mechanism_figures(args), {})
    result = benchmarks(args)
    return write_merged(args.out, command, {**result.pop("figures"), **mechanism_figures(args)}, result)


def guard_figures(n_nodes: int, ticks: int, repeats: int) -> dict[str, object]:
    """Issue 29's guard figures at `n_nodes`: the whole loop tick (GuardLoopRig: steady-state
    median, its CPU, the first tick, the full collection between ticks) and `evaluate` alone on
    `guard_context` (signals mode, the item before issue 29)."""
    k = f"{n_nodes // 1000}k"
    loop = bench_guard_loop(n_nodes, ticks)
    alone = bench_guard(n_nodes, repeats)
    out = {
        f"guard_cycle_{k}_nodes_seconds": loop["seconds"],
        f"guard_cycle_{k}_nodes_cpu_seconds": loop["cpu_seconds"],
        f"guard_cycle_{k}_nodes_max_seconds": loop["max_seconds"],
        f"guard_cycle_{k}_nodes_sent_median": loop["sent_median"],
        f"guard_first_tick_{k}_nodes_seconds": loop["first_tick_seconds"],
        f"guard_first_tick_{k}_nodes_sent": loop["first_tick_sent"],
        f"guard_full_gc_{k}_nodes_seconds": loop["full_gc_seconds"],
        f"guard_evaluate_{k}_nodes_seconds": alone["seconds"],
        f"guard_evaluate_{k}_nodes_actions": alone["actions"],
        "load_average_1min": os.getloadavg()[0],
    }
    for key, v in out.items():
        print(f"{key:42} {v:>10.4g}", flush=True)
    return out


def only_figures(args: argparse.Namespace) -> dict[str, object]:
    """`--only guard,select`: issue 29's items alone, without the heavy others."""
    items = {x.strip() for x in args.only.split(",") if x.strip()}
    unknown = items - {"guard", "select", "reserve"}
    if unknown:
        raise SystemExit(f"--only: unknown items {sorted(unknown)} (guard, select, reserve)")
    figures: dict[str, object] = {}
    cpus = frozenset(int(c) for c in args.advice_cpus.split(",") if c.strip())
    if cpus and not args.advice_process:
        raise SystemExit("--advice-cpus needs --advice-process")
    process = ("_advice_process" if args.advice_process else "") + (f"_cpus_{'_'.join(map(str, sorted(cpus)))}" if cpus else "")
    if "reserve" in items:
        r = bench_reserve_fit(args.nodes, args.reserve_days, 3.0, args.reserve_tenants)
        figures.update(reserve_figures(r, args.nodes, args.reserve_days))
    if "select" in items:
        figures.update(select_figures(bench_select(args.calls, args.repeats, args.classes, args.advice_process, cpus),
                                      f"{args.classes}_classes{process}"))
    if "guard" in items:
        figures.update(guard_figures(args.nodes, args.ticks, args.repeats))
    if "select" in items and "guard" in items:  # "while the loops run": the guard ticks in the same process
        import threading

        rig, stop = GuardLoopRig(args.nodes), threading.Event()
        rig.tick()
        state = select_state(args.classes)

        def guard_loop() -> None:
            while not stop.wait(args.control_period):
                rig.advance()
                rig.tick()
                # as the guard does each period: the classes' state again (a new table; the advice process's mirror)
                state.publish_classes(tuple(state.view().classes))

        loop = threading.Thread(target=guard_loop, daemon=True)
        loop.start()
        try:
            select = bench_select(args.calls, args.repeats, args.classes, args.advice_process, cpus, state)
        finally:
            stop.set()
            loop.join()
        switch = "" if args.switch_interval is None else f"_switch_{args.switch_interval * 1000:g}ms"
        figures.update(select_figures(select, f"{args.classes}_classes_guard_{args.nodes // 1000}k_ticking{switch}{process}"))
    return figures


def mechanism_figures(args: argparse.Namespace) -> dict[str, object]:
    """Item 5 (bench/_harvesting_mechanism.py); the dial and the real traces when asked for."""
    sys.path.insert(0, str(ROOT / "bench"))
    import _harvesting_mechanism as hm  # a helper: `make bench` runs bench/[a-z]*.py only
    from harvester.sim.sweep import make_executor

    if args.real and not args.traces:
        raise SystemExit("--real needs --traces DIR (the real Bitbrains + Alibaba traces)")
    with make_executor(args.processes) as ex:
        figures: dict[str, object] = hm.mechanism(ex, args.runs)
        print(f"mechanism: job time x{figures['mechanism_yarn_h_vs_pt_job_time_ratio']:.3f}, "
              f"kills x{figures['mechanism_yarn_h_vs_pt_kills_ratio']:.3f}, "
              f"unmet primary x{figures['mechanism_yarn_h_vs_pt_unmet_primary_ratio']:.3f}", flush=True)
        points = hm.dial(ex, args.runs) if args.dial else []
        reals = hm.real(ex, args.runs, str(Path(args.traces).resolve())) if args.real else []
    if points:
        figures["premise_dial"] = points
    if reals:
        figures["premise_real_traces"] = reals
    if points or reals:
        hm.plot(points, reals, args.plot)
        print(f"wrote {args.plot}")
    return figures


def write_merged(out: Path, command: str, figures: dict[str, object], extra: dict[str, object],
                 label: str | None = None) -> int:
    """Merge into the existing JSON: figures key by key, other top-level keys replaced."""
    try:
        old = json.loads(out.read_text()) if out.exists() else {}
    except (OSError, json.JSONDecodeError):
        old = {}
    result = {**old, **extra, "name": "harvesting", "machine": {"cores": os.cpu_count(), "python": platform.python_version()}}
    result["figures"] = {**old.get("figures", {}), **figures}
    result.setdefault("commands", {})
    parts = [k for k in ("premise_dial", "premise_real_traces") if k in figures]
    result["commands"][label or "+".join(["all" if extra else "mechanism", *parts])] = command
    for k in ("mechanism_yarn_h_vs_pt_job_time_ratio", "mechanism_yarn_h_vs_pt_kills_ratio"):
        if k in figures:
            result[k] = figures[k]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'figure':42} {'value':>10}")
    for k, v in figures.items():
        if isinstance(v, (int, float)):
            print(f"{k:42} {v:>10.4g}")
    print(f"wrote {out}")
    return 0


def benchmarks(args: argparse.Namespace) -> dict[str, object]:
    """Items 1-4 (timed)."""
    classify = bench_classify(args.tenants, args.repeats)
    select = bench_select(args.calls, args.repeats)
    guard = guard_figures(args.nodes, args.ticks, max(args.repeats, 5))  # the loop tick; evaluate alone apart
    reserve = bench_reserve_fit(args.nodes, args.reserve_days, 3.0, args.reserve_tenants)  # once: it is the largest
    figures = {
        f"classify_{args.tenants}_tenants_seconds": classify["classify_seconds"],
        f"fit_margins_{args.tenants}_tenants_seconds": classify["margins_seconds"],
        "classes_fitted": classify["classes"],
        "select_classes_p50_ms": select["p50_ms"],
        "select_classes_p99_ms": select["p99_ms"],
        **guard,
        "guard_cycle_actions": guard[f"guard_evaluate_{args.nodes // 1000}k_nodes_actions"],
        **reserve_figures(reserve, args.nodes, args.reserve_days),
    }
    targets = {"classify_5000_tenants_seconds": 60.0, "select_classes_p99_ms": 1.0, "guard_cycle_10k_nodes_seconds": 1.0,
               "reserve_fit_10k_nodes_7d_seconds": 30.0, "reserve_fit_50k_nodes_7d_seconds": 300.0,
               "reserve_fit_50k_peak_rss_mb": 2000.0}
    result = {
        "figures": figures,
        "targets": targets,
        "command": " ".join(["python", "bench/harvesting.py", *sys.argv[1:]]),
        "classify_5000_tenants_seconds": figures.get("classify_5000_tenants_seconds"),
        "select_classes_p99_ms": figures["select_classes_p99_ms"],
        "guard_cycle_10k_nodes_seconds": figures.get("guard_cycle_10k_nodes_seconds"),
        "reserve_fit_10k_nodes_7d_seconds": figures.get("reserve_fit_10k_nodes_7d_seconds"),
    }
    return result


if __name__ == "__main__":
    raise SystemExit(main())
