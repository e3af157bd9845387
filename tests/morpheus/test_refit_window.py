"""The refit (loop/morpheus_refit.py) fits a skyline that fits the SLO's window: a job whose runs
once took longer than its window gets the §5 LP over the runs that fit (models/skyline_window.py),
and its proposal carries how many were left out, the longest run and its own queue."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from prometheus_client import CollectorRegistry

from harvester.board import Board
from harvester.board.morpheus import MorpheusBoard
from harvester.config_morpheus import MorpheusSettings
from harvester.emulator.demo_recurring import RecurringJob, recurring_history
from harvester.history.sqlite import SqliteHistoryStore
from harvester.loop.morpheus_refit import MorpheusRefit
from harvester.models.job_history import RunUsage
from harvester.models.slo_contract import fit_note, fit_warning
from harvester.observability.metrics import Metrics

JOB = RecurringJob("etl", 600.0, 60.0, 4, 120.0, 30.0, 420.0)  # 10-minute period: window [30 s, 420 s)
END = 1_800_000_000.0


def test_a_run_longer_than_the_window_is_left_out_of_the_skyline(tmp_path: Path) -> None:
    """Before: the LP over all 12 runs was as long as the one that ran 9 minutes, longer than the
    6 whole steps of the window, and LowCost rejected the job whatever the plan held."""
    runs, events = recurring_history(END, jobs=(JOB,), origin="rm")
    slow = runs[5]
    usage = slow.usage
    assert usage is not None
    long = RunUsage(usage.step_s, usage.origin, usage.memory_mb * 3 + (1024,) * 6, usage.vcores * 3 + (1,) * 6,
                    usage.first_s, usage.last_s + 540.0)
    runs[5] = replace(slow, finished_at=slow.finished_at + 540.0, usage=long, queue="root.etl")
    store = SqliteHistoryStore(tmp_path / "h.db")
    store.append_job_runs(runs)
    store.append_provenance("t", events, [], None, END)
    board = MorpheusBoard(Board())
    MorpheusRefit(MorpheusSettings(enabled=True), store, board, Metrics(CollectorRegistry())).tick(END)
    model = board.model()
    assert model is not None
    (j,) = model.jobs
    p = j.proposal
    assert p.actionable and p.memory_mb is not None, (p.slo_reason, p.skyline_reason)
    assert p.longer_runs == 1 and "§5 LP over the 11 of 12 runs no longer than the window's" in p.skyline_reason
    assert len(p.memory_mb) <= 6 and p.longest_run_s >= 540.0
    terms = p.terms()
    assert terms is not None and fit_warning(terms) == "" and "leaves out 1 training run(s)" in fit_note(terms)
    assert j.home_queue == "root.etl", "the queue of its last run outside the plan queue"
