"""`harvester explain job NAME`: everything Harvester knows of one job (advice/explain.py says how).

NAME is a job's recurring identity — an application's name through `morpheus.history.name_rules`
(dates and ids stripped: `demo-hourly-sales-20261124T0710` is `demo-hourly-sales`) — or one of its
application ids. Each source says what it knows, or that it knows nothing:
- finished runs (the store's job runs, `harvesting.job_length.history_days`): Algorithm 1 line 3
  types the job by its last run, the weights row gives its class preference, and (sidecar) what
  SelectClasses answers now (OSDI'16 §4.1);
- the apps running now (sidecar: the jobs loop's last /apps poll) with the RM's own count of the
  containers it preempted from them — with `kill_mechanism: rm_overcommit` the RM picks the
  victims of a guard's cut, so that count is where the guard's kills show for a job;
- kills by signal of its containers (the decision log, by application id);
- Morpheus (sidecar; paper 002): its inferred SLO, the sign-off, LowCost's plan and its
  reservation now (advice/explain_reservation.py renders the record);
- Jockey (sidecar; paper 001): the deadline job's state, progress, prediction and last resize.
A job none of them knows is "nothing known", with what was searched (`SEARCHED`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harvester.advice.explain import DAY_S, ExplainSources, setting, subject_doc
from harvester.advice.explain_reservation import jockey_line, record_lines, records_of
from harvester.advice.jockey_http import job_doc
from harvester.advice.morpheus_documents import record_doc
from harvester.decisions.class_selection import characterize, select_classes
from harvester.decisions.strategy import selection_strategy
from harvester.domain import Resources
from harvester.models.job_history import DemandError, JobHistoryModel, JobRun, RunningApp, fit_job_history
from harvester.models.slo_contract import ContractState
from harvester.timefmt import span

ABOUT = ("a job (its recurring name or an application id): runs and type (Algorithm 1), apps running now and "
         "what the RM preempted, kills, Morpheus's SLO and reservation, Jockey's control")
SEARCHED = ("finished runs (harvesting.job_length.history_days; app names through morpheus.history.name_rules), "
            "the apps running now, Morpheus's recurring jobs and Jockey's deadline jobs")
CONTAINER = Resources(1024, 1)


def known_jobs(s: ExplainSources) -> list[str]:
    names = [r.job_name for r in s.store.job_runs(since=s.now - s.harvesting.job_length.history_days * DAY_S)]
    live = s.live
    if live is not None:
        names += [a.job_name for a in live.harvesting.running]
        names += [] if live.morpheus is None else [j.job for j in live.morpheus.jobs]
        names += [] if live.jockey is None else [j.job for j in live.jockey.jobs]
    return names


def _resolve(s: ExplainSources, subject: str, runs_window: list[JobRun]) -> str:
    """The job's recurring name: `subject`, or the job of the application id it names."""
    if not subject.startswith("application_"):
        return subject
    running = [] if s.live is None else list(s.live.harvesting.running)
    return next((a.job_name for a in running if a.app_id == subject),
                next((r.job_name for r in runs_window if r.app_id == subject), subject))


def explain_job(s: ExplainSources, subject: str, limit: int) -> dict[str, Any] | None:
    jl = s.harvesting.job_length
    every = s.store.job_runs(since=s.now - jl.history_days * DAY_S)
    job = _resolve(s, subject, every)
    runs = [r for r in every if r.job_name == job]
    live = s.live
    running = [] if live is None else [a for a in live.harvesting.running if a.job_name == job]
    model = None if live is None or live.morpheus is None else live.morpheus.job(job)
    reservations = [] if live is None or live.reservations is None else records_of(live.reservations, job, s.now)
    jockey = None if live is None or live.jockey is None else live.jockey.job(job)
    served = None if live is None or live.reservations is None else live.reservations.services.get(job)
    history = live.harvesting.jobs if live is not None else fit_job_history(
        every, short_quantile=jl.short_quantile, long_quantile=jl.long_quantile, min_runs=jl.min_runs)
    if not runs and not running and history.last_run(job) is None and model is None and not reservations \
            and jockey is None and served is None:
        return None
    summary: list[str] = [] if job == subject else [f"{subject} is an app of job {job!r}"]
    job_type, selection = _algorithm1(s, job, runs, history, summary)
    summary += [_running_line(a, s.now) for a in running]
    app_ids = [r.app_id for r in runs] + [a.app_id for a in running]
    decisions = s.store.decisions(since=s.since(), app_ids=app_ids, limit=limit) if app_ids else []
    if app_ids and not decisions:
        summary.append("no container of its apps was killed by a signal in the log (with kill_mechanism rm_overcommit the "
                       "RM picks the victims of a cut: the preempted counts above, `harvester explain node` for the cuts)")
    summary += _morpheus_lines(s, job, model, reservations)
    if served is not None:  # reserved, or static fallback and why (decisions/static_fallback.py)
        summary.append(f"Morpheus: {served.why}")
    summary.append(jockey_line(jockey) if jockey is not None else "not a Jockey deadline job (not in jockey.jobs)"
                   if live is not None else "Jockey's control: ask the running sidecar")
    settings = [setting(s, "harvesting.job_length.mode", "how the short/long thresholds are set"),
                setting(s, "harvesting.job_length.short_quantile", "runs shorter than this quantile are short"),
                setting(s, "harvesting.job_length.long_quantile", "runs from this quantile on are long")]
    if job_type is not None:
        settings.append(setting(s, f"harvesting.weights.{job_type}", "which patterns this job type prefers"))
    if model is not None or reservations:
        settings.append(setting(s, "morpheus.slo.require_sign_off", "true: only signed-off SLOs get reservations"))
    if served is not None:
        settings.append(setting(s, "morpheus.fallback.move_home", "an app whose reservation ended goes back to its own queue"))
    return subject_doc(
        "job", subject, s, summary=summary, decisions=decisions, settings=settings, job=job, job_type=job_type,
        selection=selection,
        runs=[{"app_id": r.app_id, "started_at": r.started_at, "finished_at": r.finished_at, "duration_s": r.duration_s,
               "peak_containers": r.peak_containers, "origin": r.origin} for r in runs[-limit:]],
        running=[{"app_id": a.app_id, "name": a.name, "queue": a.queue, "state": a.state, "started_at": a.started_at,
                  "containers": a.containers, "allocated_mb": a.allocated_mb, "allocated_vcores": a.allocated_vcores,
                  "preempted_containers": a.preempted} for a in running],
        morpheus=None if model is None and not reservations and served is None else {
            "service": None if served is None else served.service.value,
            "service_why": None if served is None else served.why,
            "slo": None if model is None else {"period_s": model.slo.period_s, "earliest_s": model.slo.earliest_start_s,
                                               "deadline_s": model.slo.deadline_s, "actionable": model.slo.actionable,
                                               "reason": model.slo.reason},
            "reservations": [record_doc(r, history=False) for r in reservations]},
        jockey=None if jockey is None else job_doc(jockey))


def _algorithm1(s: ExplainSources, job: str, runs: list[JobRun], history: JobHistoryModel,
                summary: list[str]) -> tuple[str | None, dict[str, Any] | None]:
    """Algorithm 1 lines 3-4 from its finished runs, its class preference and SelectClasses now."""
    if not runs and history.last_run(job) is None:
        summary.append(f"no finished run in the last {s.harvesting.job_length.history_days:g} days: Algorithm 1 "
                       "types it as medium until one finishes (the jobs loop records finished apps)")
        return None, None
    synthesized = sum(1 for r in runs if r.origin == "synthesized-demo")
    summary.append(f"{len(runs)} finished run(s) in the last {s.harvesting.job_length.history_days:g} days"
                   + (f" ({synthesized} synthesized by the embedded demo)" if synthesized else ""))
    strategy = selection_strategy(s.harvesting)
    try:
        demand = characterize(job, history=history, fallback_thresholds=strategy.fallback_thresholds, container=CONTAINER)
    except DemandError as exc:
        summary.append(f"demand unknown: {exc}")
        return None, None
    summary.append(f"Algorithm 1 lines 3-4: {demand.reason}")
    row = strategy.weights[demand.job_type]
    summary.append(f"{demand.job_type.value} jobs prefer " + ", ".join(
        f"{p.value} ×{row.get(p, 0.0):g}" for p in sorted(row, key=lambda p: -row.get(p, 0.0)))
        + f" (harvesting.weights.{demand.job_type.value})")
    live = s.live
    selection = None
    if live is not None and live.harvesting.model is not None and live.harvesting.classes:
        pick = select_classes(demand, live.harvesting.table, np.random.default_rng(0), weights=strategy.weights,
                              model_version=live.harvesting.model.version)
        container = f"<{CONTAINER.memory_mb} MB, {CONTAINER.vcores} vc>"
        selection = {"reason": pick.reason, "classes": [c.class_id for c in pick.choices], "container": container}
        summary.append(f"SelectClasses now (1 container {container}, seed 0): {pick.reason}")
    return demand.job_type.value, selection


def _running_line(a: RunningApp, now: float) -> str:
    preempted = ("the RM does not report preemptions" if a.preempted is None else
                 f"the RM preempted {a.preempted} of its containers so far")
    return (f"running now: {a.app_id} {a.name!r} in {a.queue}, {a.state} for {span(now - a.started_at)}, "
            f"{a.containers} container(s) <{a.allocated_mb} MB, {a.allocated_vcores} vc>; {preempted}")


def _morpheus_lines(s: ExplainSources, job: str, model: Any, reservations: list[Any]) -> list[str]:
    live = s.live
    if live is None:
        return ["Morpheus's SLO and reservations: ask the running sidecar"]
    if model is None and not reservations:
        return ["not one of Morpheus's recurring jobs" + ("" if live.morpheus is not None else " (Morpheus is off or has "
                                                          "no model yet)")]
    lines = []
    if model is not None:
        slo = model.slo
        contract = s.store.slo_contracts().get(job)
        state = ContractState.PROPOSED if contract is None else contract.state
        if slo.actionable and slo.period_s is not None:
            lines.append(f"Morpheus: recurring every {slo.period_s:.0f} s, inferred SLO: start from "
                         f"{slo.earliest_start_s:.0f} s, done by {slo.deadline_s:.0f} s after the period start, from "
                         f"{model.runs} run(s); sign-off {state.value} (`harvester slo show {job}`)")
        else:
            lines.append(f"Morpheus: no actionable SLO ({slo.reason}); sign-off {state.value}")
    view = live.reservations
    for r in reservations:
        assert view is not None
        first, window = record_lines(view, r, s.now)[:2]
        lines += ["Morpheus reservation " + first.removeprefix("Morpheus "), f"  {window}"]
    return lines
