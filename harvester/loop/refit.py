"""Tick that refits the utilization classes and margins (OSDI'16 §4.1; paper 004 §4).

§4.1: "The clustering algorithm periodically (e.g., once per day) takes the most recent time
series of CPU utilizations from the average server of each primary tenant, runs the FFT ...
and then uses the K-Means algorithm". Each refit:

1. reads the tenant slots of the window `[end − window_days, end)`, `end` = the start of the
   current (still filling) 2-minute slot (models/tenant_slots.py). The window starts at the
   first stored slot when the history is younger than `window_days`: slots before anything was
   observed are not "missing" samples, and counting them as such would fail the periodicity
   test's missing-data rule (`patterns.max_missing_fraction`) for the first half of the window
   — a sidecar with 6 days of history could not find a daily pattern for 9 more days;
2. fits the class model (models/utilization_classes.fit, tenants weighted by their node count)
   and the margins per class by `harvesting.reserve.method`: `reaction` (default) — rises within
   the reaction horizon H, counted per tenant and day in
   the store's rise summaries: each refit folds in only the raw primary vectors since the last
   fold, block by block, and sums the tenants' days of the last `reserve.window_days` per class
   (models/rise_summary.py, bounded memory; classes with too few windows get the coarse rule of
   models/reaction_margins.py over the slot changes); `change` — |Δu| between slots
   (models/margins.py); `fixed` — no fit, `reserve.fixed_fraction` everywhere. Both versioned
   as last stored + 1 and persisted (principle 9: the model never writes the store, this loop
   does);
3. resolves the reserves (decisions/reserve.py policy) and publishes model, reserves and nodes
   per class on the state board (board/harvesting.py); fits and publishes the job history
   of Algorithm 1 lines 3-4 from the stored job runs.

Schedule: the loop ticks often (`check_every_s`) and refits when the last fit is at least
`harvesting.refit_interval_s` old — also across restarts, since `fitted_at` is stored; on its
first tick a fresh stored model is published without refitting. `request()` asks for a refit at
the next tick regardless (POST /v1/harvesting/refit, `harvester tenants --refit`). Without any
slot in the window nothing is fitted (an empty model would erase the classes).
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections import Counter
from dataclasses import replace
from typing import Callable, Iterator, TypeVar

from harvester.board.harvesting import HarvestingBoard
from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.class_view import nodes_per_class
from harvester.decisions.reserve import ReserveTable, fixed_reserves, resolve_reserves
from harvester.decisions.strategy import NodeStrategy, class_params, reserve_policy
from harvester.history.store import HistoryStore
from harvester.loop.runner import TickResult
from harvester.models.job_history import JobHistoryModel, JobRun, capacity_thresholds, fit_job_history
from harvester.models.margins import MarginModel, fit_margins
from harvester.models.reaction_margins import BINS, horizon_samples, margins_from_histogram
from harvester.models.rise_summary import class_histogram, first_day, fold
from harvester.models.patterns import PATTERNS, Pattern
from harvester.models.tenant_series import TenantSeries
from harvester.models.tenant_slots import series_from_rows, slot_start
from harvester.models.utilization_classes import TenantClassModel, fit
from harvester.observability.metrics import Metrics

DAY_S = 86400.0
Nodes = Callable[[], "dict[str, NodeStrategy]"]
T = TypeVar("T")


def job_history(runs: list[JobRun], h: HarvestingSettings, model: TenantClassModel | None,
                nodes: dict[str, NodeStrategy]) -> JobHistoryModel:
    """Algorithm 1 line 3 thresholds by `harvesting.job_length.mode` (models/job_history.py).

    capacity: long jobs get the constant classes' share of the harvested nodes' vcores, short
    jobs the unpredictable classes' share (§4.1); fewer than `min_runs` runs: cold start.
    """
    jl = h.job_length
    thresholds = None
    if jl.mode == "capacity" and model is not None and len(runs) >= jl.min_runs:
        tenant_class = model.tenant_class_map()
        cap: Counter[Pattern] = Counter()
        for ns in nodes.values():
            c = model.class_by_id(tenant_class.get(ns.tenant, ""))
            if c is not None:
                cap[c.pattern] += ns.capacity.vcores
        total = sum(cap.values())
        if total:
            thresholds = capacity_thresholds(runs, short_share=cap[Pattern.UNPREDICTABLE] / total,
                                             long_share=cap[Pattern.CONSTANT] / total)
    return fit_job_history(runs, short_quantile=jl.short_quantile, long_quantile=jl.long_quantile,
                           min_runs=jl.min_runs, thresholds=thresholds)


def prefetched(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """`items` read ahead by a thread, at most `depth` items ahead (bounded memory): the store's
    SQLite reads and the numpy fold both release the GIL, so on two cores they overlap."""
    q: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[bool, object]) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((False, None))
        except BaseException as exc:  # handed to the consumer
            put((False, exc))

    worker = threading.Thread(target=produce, name="prefetch", daemon=True)
    worker.start()
    try:
        while True:
            more, item = q.get()
            if not more:
                if isinstance(item, BaseException):
                    raise item
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()


class Refit:
    """`tick(now)`: refit when due or requested (module docstring); thread-safe."""

    def __init__(self, store: HistoryStore, board: HarvestingBoard, metrics: Metrics, harvesting: HarvestingSettings,
                 nodes: Nodes, *, horizon_s: float = 22.0, poll_interval_s: float = 10.0) -> None:
        self._horizon_s = horizon_s
        self._poll_s = poll_interval_s
        self._store = store
        self._board = board
        self._metrics = metrics
        self._h = harvesting
        self._nodes = nodes
        self._lock = threading.Lock()
        self._requested = False
        self._published_version: int | None = None

    def request(self) -> None:
        """Refit at the next tick even if the last fit is recent."""
        with self._lock:
            self._requested = True

    def tick(self, now: float) -> TickResult:
        with self._lock:
            stored = self._store.class_model()
            due = stored is None or now - stored.fitted_at >= self._h.refit_interval_s
            if not (due or self._requested):
                if stored is not None and self._published_version != stored.version:
                    self._publish(stored, self._store.margin_model(stored.version), now)
                return TickResult({"refit": False, "model_version": stored.version if stored else None,
                                   "next_in_s": round(stored.fitted_at + self._h.refit_interval_s - now, 1) if stored else 0})
            self._requested = False
            return self._refit(now, 1 if stored is None else stored.version + 1)

    def _refit(self, now: float, version: int) -> TickResult:
        h = self._h
        step = h.sample_step_s
        end = slot_start(now, step)
        start = end - round(h.window_days * DAY_S / step) * step
        began = time.perf_counter()  # decision cost in wall time, whatever the Clock (with the read: one stream)
        # streamed into the matrix, never one object per slot; from the first slot when the
        # history is younger than the window (module docstring)
        series, node_counts, slots = self._store.read_tenant_slots(
            lambda rows: series_from_rows(rows, start=start, end=end, step_s=step, from_first=True), since=start, until=end)
        if not series.tenants:
            return TickResult({"refit": False, "why": "no tenant history in the window", "model_version": None})
        model = fit(series, version=version, fitted_at=now, params=class_params(h), tenant_weights=node_counts)
        margins = self._margins(series, model, version, now, end)
        self._metrics.record_decision("fit", time.perf_counter() - began)
        self._metrics.record_rows_written("class_models", self._store.save_class_model(model))
        self._metrics.record_rows_written("margin_models", self._store.save_margin_model(margins))
        self._publish(model, margins, now)
        return TickResult({"refit": True, "model_version": version, "tenants": len(series.tenants),
                           "classes": len(model.classes), "slots": slots})

    def _margins(self, series: TenantSeries, model: TenantClassModel, version: int, now: float, end: float) -> MarginModel:
        r = self._h.reserve
        slots = fit_margins(series, model.tenant_class_map(), quantile=r.quantile, version=version, fitted_at=now)
        if r.method != "reaction":
            return replace(slots, method=r.method)
        keep = first_day(end, r.window_days)
        sample_s = self.fold_rises(end, keep)
        class_ids = [c.class_id for c in model.classes]
        hist = class_histogram(self._store.rise_summaries(from_day=keep), model.tenant_class_map(), class_ids)
        return margins_from_histogram(hist, class_ids, horizon_s=self._horizon_s, quantile=r.quantile, coarse=slots,
                                      sample_s=sample_s, min_windows=r.min_windows, version=version, fitted_at=now)

    def fold_rises(self, end: float, keep_from_day: int) -> float:
        """Fold the raw primary vectors since the last fold into the stored per-tenant rise
        summaries (models/rise_summary.py); returns the sample interval. The summaries restart
        from the retained raw samples when H, the bins or the window length k changed."""
        h, state = self._horizon_s, self._store.rise_fold_state()
        known = state is not None and math.isfinite(state.interval_s)
        fresh = (state is None or state.bins != BINS or state.horizon_s != h
                 or (known and horizon_samples(h, state.interval_s) != horizon_samples(h, self._poll_s)))
        since = keep_from_day * DAY_S if fresh else max(state.folded_until, keep_from_day * DAY_S)  # type: ignore[union-attr]
        node_tenant = {n: ns.tenant for n, ns in self._nodes().items() if ns.tenant}
        blocks = prefetched(self._store.primary_vectors(since=since, until=end))  # SQLite reads overlap the fold
        new, days = fold(blocks, node_tenant, horizon_s=h,
                         interval_s=state.interval_s if known and not fresh else None, until=end)  # type: ignore[union-attr]
        self._metrics.record_rows_written("rise_summaries", self._store.save_rise_fold(
            new, days, keep_from_day=keep_from_day, reset=fresh))
        return new.interval_s if math.isfinite(new.interval_s) else self._poll_s

    def _publish(self, model: TenantClassModel, margins: MarginModel | None, now: float) -> ReserveTable:
        h = self._h
        class_ids = [c.class_id for c in model.classes]
        if h.reserve.method == "fixed":
            reserves = fixed_reserves(class_ids, h.reserve.fixed_fraction)
        else:
            reserves = resolve_reserves(margins, class_ids, reserve_policy(h))
        nodes = self._nodes()
        self._board.publish_model(model, reserves, nodes_per_class(model, nodes))
        runs = self._store.job_runs(since=now - h.job_length.history_days * DAY_S)
        self._board.publish_jobs(job_history(runs, h, model, nodes))
        self._published_version = model.version
        classes, tenants = Counter(c.pattern for c in model.classes), Counter(a.pattern for a in model.tenants)
        self._metrics.record_class_model(
            model.version, {p.value: classes[p] for p in PATTERNS}, {p.value: tenants[p] for p in PATTERNS}
        )
        self._metrics.record_reserves(dict(reserves.by_class))
        return reserves
