"""Benchmark of `harvester whatif` on a large store: 1,000 nodes × 30 days of history (issue 28).

    nice .venv/bin/python bench/whatif.py [--nodes 1000] [--days 30] [--policies stock,yarn-pt] [--keep DIR]

Synthesizes a history store through the store's own append APIs, as a large cluster's sidecar
holds it (`store.node_sample_rows: false`: compact primary vectors, one per 2-minute poll, plus
2-minute tenant slots): 50 tenants of 20 nodes (16 cores, 16 vcores, 64 GB), 40 % of nodes
periodic (daily sine), 35 % constant, 25 % bursty, each node its tenant's series with its own
noise; ~2,000 finished jobs a day with skylines (200 daily recurring jobs, the rest ad hoc).
Then times ONE `harvester whatif --config <bench settings> --policies <two>` (default 7 days
replayed, the 23 before as the loops' past; --no-recommend: exactly the two runs) in a child
process; peak RSS is the largest of that process and its pool workers (RUSAGE_CHILDREN).
Targets: < 300 s on two cores, < 2,000 MB. Writes bench/results/whatif.json (keys merged).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "whatif.json"
TARGET_S, TARGET_MB = 300.0, 2000.0
STEP_S, DAY_S = 120.0, 86400.0
START = 1_790_000_000.0 - (1_790_000_000.0 % DAY_S)


def tenant_series(kind: str, days: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(int(days * DAY_S / STEP_S)) * STEP_S
    if kind == "periodic":
        u = 0.35 + 0.25 * np.sin(2 * np.pi * (t / DAY_S + rng.uniform()))
    elif kind == "constant":
        u = np.full(t.size, rng.uniform(0.2, 0.5))
    else:
        u = np.full(t.size, 0.15)
        for s in rng.integers(0, t.size, size=days * 16):
            u[s:s + int(rng.integers(5, 40))] += rng.uniform(0.2, 0.6)
    return np.clip(u, 0.0, 1.0)


def synthesize(path: Path, nodes: int, days: int, seed: int = 7) -> dict[str, int]:
    from harvester.domain import NodeBaseline, Resources
    from harvester.history.sqlite import SqliteHistoryStore
    from harvester.models.job_history import JobRun, RunUsage
    from harvester.models.tenant_slots import TenantSlot

    rng = np.random.default_rng(seed)
    per = 20
    tenants = max(1, nodes // per)
    kinds = rng.choice(["periodic", "constant", "bursty"], size=tenants, p=[0.4, 0.35, 0.25])
    store = SqliteHistoryStore(str(path))
    ids = [f"t{t:03d}-n{i:02d}.bench:8041" for t in range(tenants) for i in range(per)][:nodes]
    store.record_node_baselines([NodeBaseline(n, n.rsplit(":", 1)[0], Resources(65536, 16), START) for n in ids])
    steps = int(days * DAY_S / STEP_S)
    util = np.empty((steps, len(ids)), dtype=np.float32)
    slots = []
    for t in range(tenants):
        base = tenant_series(str(kinds[t]), days, rng)
        cols = slice(t * per, min(len(ids), (t + 1) * per))
        width = cols.stop - cols.start
        util[:, cols] = np.clip(base[:, None] + rng.normal(0, 0.03, (steps, width)), 0, 1)
        avg = util[:, cols].mean(axis=1)
        slots += [TenantSlot(f"t{t:03d}", START + k * STEP_S, float(avg[k]), 1, width) for k in range(steps)]
    store.add_tenant_slots(slots)
    times = START + np.arange(steps) * STEP_S + 5.0
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    for lo in range(0, steps, 720):
        store.append_primary_vectors(times[lo:lo + 720].tolist(), [ids[i] for i in order], util[lo:lo + 720][:, order])
    runs = []
    app = 0
    for d in range(days):
        for r in range(200):  # daily recurring jobs, each at its own time of day
            submit = START + d * DAY_S + (r * 431.0) % DAY_S + rng.uniform(0, 120)
            runs.append((f"daily-{r:03d}", submit))
        for _ in range(1800):
            runs.append((f"adhoc-{app}", START + d * DAY_S + rng.uniform(0, DAY_S)))
            app += 1
    jobs = []
    for i, (name, submit) in enumerate(runs):
        c = int(np.clip(rng.lognormal(2.0, 0.8), 1, 60))
        dur = float(np.clip(rng.lognormal(7.5, 0.8), 300, 7200))
        n = int(np.ceil(dur / 60.0))
        usage = RunUsage(60.0, submit + 10, tuple([c * 2048] * n), tuple([c] * n), 0.0, (n - 1) * 60.0)
        jobs.append(JobRun(name, f"application_{int(START)}_{i:06d}", submit, submit + 10 + dur, c, c * dur,
                           submit + 10, "SUCCEEDED", "default", "rm", usage))
    for lo in range(0, len(jobs), 5000):
        store.append_job_runs(jobs[lo:lo + 5000])
    store.close()
    return {"nodes": len(ids), "tenants": tenants, "days": days, "polls": steps, "job_runs": len(jobs)}


def settings_file(folder: Path, store: Path, tenants: int) -> Path:
    lines = [f"store: {{path: {store}}}", "cluster: {source: rm}", "rm: {urls: ['http://127.0.0.1:1']}",
             "harvesting:", "  node_resources: {physical_cores: 16}", "  tenants:"]
    lines += [f"    - {{tenant: t{t:03d}, hostname_pattern: '^t{t:03d}-'}}" for t in range(tenants)]
    p = folder / "bench.yaml"
    p.write_text("\n".join(lines) + "\n")
    return p


def merge(keys: dict) -> None:
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    doc.update(keys)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--policies", default="stock,yarn-pt")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--replay-days", type=float, default=None, help="whatif --days (default: whatif's own, 7)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the store and report in this folder")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="harvester-whatif-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "history.db"
    t0 = time.perf_counter()
    if not store.exists():
        facts = synthesize(store, args.nodes, args.days)
    else:
        facts = {"nodes": args.nodes, "days": args.days, "reused_store": True}
    synth_s = time.perf_counter() - t0
    print(f"store: {facts} in {synth_s:.1f} s ({store.stat().st_size / 1e6:.0f} MB)", flush=True)
    cfg = settings_file(folder, store, max(1, args.nodes // 20))
    cmd = [sys.executable, "-m", "harvester", "whatif", "--config", str(cfg), "--policies", args.policies,
           "--processes", str(args.processes), "--out", str(folder / "report"), "--quiet", "--no-recommend"]
    if args.replay_days is not None:
        cmd += ["--days", str(args.replay_days)]
    load = os.getloadavg()[0]
    t1 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t1
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    print(proc.stdout.strip())
    if proc.returncode != 0:
        print(proc.stderr.strip(), file=sys.stderr)
        return 1
    report = json.loads((folder / "report" / "whatif.json").read_text())
    runs = {k: round(v["wall_s"], 1) for k, v in {**report["policies"], **report["variants"]}.items()}
    cpu = {k: round(v["cpu_s"], 1) for k, v in {**report["policies"], **report["variants"]}.items()}
    print(f"whatif {args.nodes} nodes x {args.days} days, policies {args.policies}: {wall:.1f} s wall "
          f"(target < {TARGET_S:.0f}), peak RSS {rss:.0f} MB (target < {TARGET_MB:.0f}); load avg {load:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at end; simulation loops (s wall): {runs}; CPU per run (s): {cpu}")
    if args.nodes == 1000 and args.days == 30:
        # the headline keys are for whatif's default replay (7 days); another --replay-days gets its own keys
        tag = "" if args.replay_days is None else f"_replay{args.replay_days:g}d"
        merge({f"whatif_1k_nodes_30d{tag}_seconds": round(wall, 1), f"whatif{tag}_peak_rss_mb": round(rss, 0),
               f"whatif{tag}_run_cpu_seconds": cpu,
               "whatif_policies": args.policies, "whatif_runs": sorted(runs), f"whatif{tag}_loop_seconds": runs,
               f"whatif{tag}_replay_days": report["coverage"]["replay_days"], f"whatif{tag}_jobs": report["coverage"]["jobs"],
               f"whatif{tag}_load_avg": round(load, 2), "whatif_targets": {"seconds": TARGET_S, "peak_rss_mb": TARGET_MB}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
