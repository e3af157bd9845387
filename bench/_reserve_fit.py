"""The reaction-reserve fit at scale through the real store (issue 29): helper of bench/harvesting.py.

Not a benchmark itself (the underscore keeps `make bench` off it). One SQLite file on disk is fed
day by day with 3-s primary vectors of `nodes` nodes (`append_primary_vectors`, as the telemetry
loop writes them; untimed), pruned to `store.raw_samples_retention_days` as the retention loop
does, and after each day a fresh child process runs the refit's reserve step: `Refit.fold_rises`
(the new raw samples since the last fold, read block by block with the store's `primary_vectors`,
into the stored per-tenant daily rise summaries), then the per-class histogram over
`reserve.window_days` from `rise_summaries` and the margins (loop/refit.py `_margins`). Its wall
time and peak RSS (`ru_maxrss` of the child, imports included) are the figures: the sum over the
days is the whole `days`-day fit (every rise folded once), the largest the cost of one daily refit.

Data: one block of `BLOCK` polls of random-walk utilization (σ = 0.01 per poll, clipped to [0, 1],
1 % NaN) replayed with advancing times; nodes → `tenants` tenants (contiguous node ranges, as
the telemetry loop orders vectors) → `classes` classes round-robin.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BLOCK = 512
WRITE_POLLS = 32
DAY_S = 86400.0
T0 = 20_000 * DAY_S  # a UTC day boundary


def _node_ids(n: int) -> tuple[str, ...]:
    return tuple(f"node-{i:05d}.dc:8041" for i in range(n))


def tenant_of(i: int, nodes: int, tenants: int) -> str:
    """Contiguous ranges of node ids per tenant, in the order the telemetry loop writes vectors
    ((tenant, node id), loop/harvest_nodes.py)."""
    return f"tenant-{i * tenants // nodes:05d}"


def refit_child(path: str, end: float, nodes: int, tenants: int, classes: int, interval_s: float,
                horizon_s: float) -> dict[str, Any]:
    """The reserve step of one refit at `end` (module docstring), in a fresh process."""
    from prometheus_client import CollectorRegistry

    from harvester.board import Board
    from harvester.board.harvesting import HarvestingBoard
    from harvester.config_harvesting import HarvestingSettings
    from harvester.decisions.strategy import NodeStrategy
    from harvester.domain import Resources
    from harvester.history.sqlite import SqliteHistoryStore
    from harvester.loop.refit import Refit
    from harvester.models.reaction_margins import margins_from_histogram
    from harvester.models.rise_summary import class_histogram, first_day
    from harvester.observability.metrics import Metrics

    h = HarvestingSettings()
    ids = _node_ids(nodes)
    strategies = {n: NodeStrategy(n, n[:-5], tenant_of(i, nodes, tenants), "prod", 16.0, Resources(65536, 16))
                  for i, n in enumerate(ids)}
    tenant_class = {f"tenant-{t:05d}": f"class-{t % classes}" for t in range(tenants)}
    class_ids = [f"class-{c}" for c in range(classes)]
    store = SqliteHistoryStore(path)
    refit = Refit(store, HarvestingBoard(Board()), Metrics(CollectorRegistry()), h, lambda: strategies,
                  horizon_s=horizon_s, poll_interval_s=interval_s)
    before = store.rise_fold_state()
    load, c0, t0 = os.getloadavg()[0], time.process_time(), time.perf_counter()
    keep = first_day(end, h.reserve.window_days)
    sample_s = refit.fold_rises(end, keep)
    hist = class_histogram(store.rise_summaries(from_day=keep), tenant_class, class_ids)
    margins = margins_from_histogram(hist, class_ids, horizon_s=horizon_s, quantile=h.reserve.quantile, coarse=None,
                                     sample_s=sample_s, min_windows=h.reserve.min_windows, version=1, fitted_at=end)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0  # cpu: both threads (the read-ahead)
    store.close()
    return {"seconds": seconds, "cpu_seconds": cpu, "load_1min": load,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "read_from": before.folded_until if before else None, "windows": int(hist.counts.sum()),
            "margin_class0": margins.margin("class-0").margin}


def run(nodes: int, days: float, interval_s: float, *, tenants: int, classes: int = 20, horizon_s: float = 20.0,
        store_dir: str | None = None) -> dict[str, float]:
    from harvester.config import StoreSettings
    from harvester.history.sqlite import SqliteHistoryStore

    retention_s = StoreSettings().raw_samples_retention_days * DAY_S
    rng = np.random.default_rng(4)
    walk = np.cumsum(rng.normal(0, 0.01, (BLOCK, nodes)).astype(np.float32), axis=0)
    values = np.clip(0.4 + walk, 0.0, 1.0).astype(np.float32)
    values[rng.random(values.shape) < 0.01] = np.nan
    ids = _node_ids(nodes)
    polls, per_day = int(round(days * DAY_S / interval_s)), int(round(DAY_S / interval_s))
    ctx = mp.get_context("spawn")
    out: dict[str, Any] = {"fits": []}
    write_s = 0.0
    with tempfile.TemporaryDirectory(dir=store_dir, prefix="harvester-reserve-") as d:
        path = str(Path(d) / "history.db")
        store = SqliteHistoryStore(path)
        done = 0
        for day in range(math.ceil(polls / per_day)):
            n, written = min(per_day, polls - done), write_s
            t0 = time.perf_counter()
            for lo in range(done, done + n, WRITE_POLLS):
                hi = min(done + n, lo + WRITE_POLLS)
                rows = np.arange(lo, hi)
                store.append_primary_vectors((T0 + rows * interval_s).tolist(), ids, values[rows % BLOCK])
            write_s += time.perf_counter() - t0
            done += n
            end = T0 + done * interval_s
            if day == 0:
                out["raw_bytes_per_node_day"] = Path(path).stat().st_size / nodes / (n / per_day)
            store.prune(before=end - retention_s)  # the retention loop
            # The WAL as the refit finds it: one day of vectors (5.8 GB at 50,000 nodes) from the
            # first prune on while SQLite zeroed the pruned pages (secure_delete, history/sqlite.py)
            wal = Path(path + "-wal")
            out["wal_bytes_max"] = max(out.get("wal_bytes_max", 0), wal.stat().st_size if wal.exists() else 0)
            with ctx.Pool(1) as pool:  # a fresh process per refit: its peak RSS is the fit's
                fit = pool.apply(refit_child, (path, end, nodes, tenants, classes, interval_s, horizon_s))
            out["fits"].append(fit)
            print(f"  reserve day {day + 1}: fold {fit['seconds']:.1f} s ({fit['cpu_seconds']:.1f} s CPU, load "
                  f"{fit['load_1min']:.1f}), write {write_s - written:.1f} s, peak RSS {fit['peak_rss_mb']:.0f} MB, "
                  f"{fit['windows']:,} windows in the window, q0.95 class-0 {fit['margin_class0']:.3f}", flush=True)
        out["disk_bytes_max"] = Path(path).stat().st_size
        store.close()
    fits = out["fits"]
    return {"seconds": sum(f["seconds"] for f in fits), "cpu_seconds": sum(f["cpu_seconds"] for f in fits),
            "load_max": max(f["load_1min"] for f in fits), "refit_max_seconds": max(f["seconds"] for f in fits),
            "peak_rss_mb": max(f["peak_rss_mb"] for f in fits), "values": float(polls) * nodes,
            "write_seconds": write_s, "raw_bytes_per_node_day": out["raw_bytes_per_node_day"],
            "disk_bytes_max": float(out["disk_bytes_max"]), "wal_bytes_max": float(out["wal_bytes_max"]),
            "margin_class0": fits[-1]["margin_class0"],
            "windows": float(fits[-1]["windows"])}
