"""Tick of Morpheus's refit loop (paper 002 §3-§5): SLOs and skylines of the recurring jobs,
refitted from the history store every `morpheus.slo.refit_interval_s` (§3: "continuously
refines existing ones on slow time scale") or when asked (`request()`: at start, after the
embedded demo's back-fill).

One refit: the job runs of the last `history.window_days` (job_runs, with the skyline each
was polled with) and the provenance events of that window (NameNode audit log / JSONL, loop
morpheus_ingest) → the provenance graph (models/provenance.build_graph; runs are the RM's
successful apps — §3.1 — plus runs only the JSONL knows) → `fit_slo` (§4) for every name with
at least two successful runs → `fit_skyline` (§5, the LP) on the last `skyline.max_runs` runs
whose polls cover at least `history.min_coverage` of their execution — when that skyline is
longer than the SLO's window, again on the runs that fit the window (models/skyline_window.py:
the runs left out and the longest run go into the proposal, decisions/static_fallback.py uses
them) → a `Proposal` per job (models/slo_contract.py), published with the fits on the board
(board/morpheus.MODEL). A job without an actionable deadline or without a skyline is published
too, with the reason.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

from harvester.board.morpheus import JobModel, MorpheusBoard, MorpheusModel
from harvester.decisions.static_fallback import home_queue
from harvester.config_morpheus import MorpheusSettings
from harvester.history.store import HistoryStore
from harvester.loop.runner import TickResult
from harvester.models.job_history import JobRun
from harvester.models.provenance import RunRecord, build_graph
from harvester.models.skyline import RunSkyline, SkylineFitError, SkylineModel
from harvester.models.skyline_window import fit_in_window
from harvester.models.slo_contract import Proposal, window_steps
from harvester.models.slo_inference import JobSlo, fit_slo
from harvester.observability.metrics import Metrics

DAY_S = 86_400.0


def run_record(r: JobRun) -> RunRecord:
    """A job run as the provenance graph's run (submit = the RM's startedTime, start = launch)."""
    return RunRecord(r.job_name, r.app_id, r.started_at, r.launched_at, r.finished_at)


class MorpheusRefit:
    """`tick(now)`: refit when due (module docstring)."""

    def __init__(self, settings: MorpheusSettings, store: HistoryStore, board: MorpheusBoard, metrics: Metrics) -> None:
        self._s = settings
        self._store = store
        self._board = board
        self._metrics = metrics
        self._last: float | None = None
        self._version = 0
        self._requested = threading.Event()

    def request(self) -> None:
        """Refit at the next tick whatever the interval says."""
        self._requested.set()

    def tick(self, now: float) -> TickResult:
        due = self._last is None or self._requested.is_set() or now - self._last >= self._s.slo.refit_interval_s
        if not due:
            return TickResult({"refit": False, "next_in_s": round(self._s.slo.refit_interval_s - (now - self._last), 1)})
        self._requested.clear()
        began = time.perf_counter()
        model = self.fit(now)
        self._last = now
        self._board.publish_model(model)
        self._metrics.record_decision("morpheus_refit", time.perf_counter() - began)
        return TickResult({"refit": True, "version": model.version, "jobs": len(model.jobs),
                           "actionable": sum(j.proposal.actionable for j in model.jobs),
                           "skylines": sum(j.skyline is not None for j in model.jobs),
                           "provenance_events": model.provenance_events})

    def fit(self, now: float) -> MorpheusModel:
        s = self._s
        since = now - s.history.window_days * DAY_S
        runs = [r for r in self._store.job_runs(since=since, with_usage=True) if r.succeeded]
        accesses, extra = self._store.provenance(since=since)
        by_job: dict[str, list[JobRun]] = defaultdict(list)
        for r in runs:
            by_job[r.job_name].append(r)
        records = {r.app_id: run_record(r) for r in runs}
        for x in extra:
            records.setdefault(x.run_id, x)
        counts: dict[str, int] = defaultdict(int)
        for x in records.values():
            counts[x.job] += 1
        names = sorted(j for j, n in counts.items() if n >= 2)
        graph = build_graph(accesses, records.values(), s.provenance.private_prefixes)
        slos = fit_slo(graph, s.slo_params(), jobs=names)
        self._version += 1
        jobs = []
        for slo in slos.jobs:
            mine = sorted(by_job.get(slo.job, []), key=lambda r: r.finished_at)
            room = None
            if slo.actionable and slo.earliest_start_s is not None and slo.deadline_s is not None:
                first, last = window_steps(slo.earliest_start_s, slo.deadline_s, s.step_s)
                room = max(0, last - first + 1)
            skyline, used, why, longer = self._skyline(mine, room)
            longest = max((r.finished_at - r.started_at for r in mine), default=0.0)
            jobs.append(JobModel(slo.job, counts[slo.job], sum(r.origin == "synthesized-demo" for r in mine), used,
                                 slo, skyline, _proposal(slo, skyline, why, s.step_s, longer, longest),
                                 home_queue(mine, s.queue)))
        return MorpheusModel(self._version, now, tuple(jobs), sum(1 for n in counts.values() if n < 2),
                             len(accesses) + len(extra))

    def _skyline(self, runs: list[JobRun], room: int | None) -> tuple[SkylineModel | None, int, str, int]:
        s = self._s
        usable = [r for r in runs if r.usage is not None and abs(r.usage.step_s - s.step_s) < 1e-9
                  and r.usage.coverage(r.finished_at) >= s.history.min_coverage and any(r.usage.memory_mb)]
        usable = usable[-s.skyline.max_runs:]
        if len(usable) < s.skyline.min_runs:
            return None, len(usable), (f"{len(usable)} of {len(runs)} runs have a usable polled skyline "
                                       f"(need {s.skyline.min_runs}; coverage >= {s.history.min_coverage:g})"), 0
        try:
            fit = fit_in_window([RunSkyline(r.app_id, s.step_s, r.usage.memory_mb, r.usage.vcores)  # type: ignore[union-attr]
                                 for r in usable], room, s.skyline_params())
        except SkylineFitError as exc:
            return None, len(usable), f"skyline LP: {exc}", 0
        return fit.model, fit.used, fit.how or fit.why, fit.longer


def _proposal(slo: JobSlo, sky: SkylineModel | None, why: str, step_s: float, longer: int = 0,
              longest_s: float = 0.0) -> Proposal:
    return Proposal(
        slo.job, slo.period_s if slo.actionable else None, slo.earliest_start_s, slo.deadline_s, slo.grid_origin_s,
        slo.problematic, slo.reason, step_s,
        None if sky is None else tuple(int(x) for x in sky.memory_mb),
        None if sky is None else tuple(int(x) for x in sky.vcores), why, longer, longest_s)
