"""The Morpheus evaluation in the simulator: recurring jobs from DAG shapes, history and SLO terms,
static and reservation days with and without DRA, the summary and `harvester evaluate morpheus`.
Workloads are small enough to check by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harvester.cli import main as harvester_main
from harvester.domain import Resources
from harvester.models.job_model import JobModel, Quantiles, StageModel
from harvester.models.job_sim import CompiledJob, DagRun, draw
from harvester.models.slo_contract import Terms
from harvester.sim.morpheus.history import consumer_time, polled_usage, fit_job, observe, p95_peak
from harvester.sim.morpheus.report import summary
from harvester.sim.morpheus.runner import CUT, LATE_INPUT, NO_RESERVATION, JobDay, morpheus_day, static_day
from harvester.sim.morpheus.workload import DAY_S, RecurringJob, recurring_jobs
from harvester.sim.workload import build_job
from tests.support.shared_paths import TRACES_DIR

C = Resources(1024, 1)


def tasks_of(n: int, secs: float) -> CompiledJob:
    """One stage of `n` tasks of exactly `secs` seconds, no initialization, no failures."""
    return CompiledJob(JobModel("j", (StageModel("s", n, Quantiles.constant(secs), Quantiles.constant(0.0)),)))


def a_run(day: int, submit_tod: float, n: int = 4, secs: float = 90.0, name: str = "job"):  # type: ignore[no-untyped-def]
    job = tasks_of(n, secs)
    return observe(name, day, job, draw(job, np.random.default_rng(0)), day * DAY_S + submit_tod)


def recurring(name: str = "job") -> RecurringJob:
    spec = build_job(name, 0.0, [("s", np.full(4, 90.0), 1, 1024, [])], name=name)
    return RecurringJob(name, ("s",), {d: spec for d in range(6)}, C)


@pytest.mark.parametrize("allocation, start, expected", [
    (2, 0.0, [2, 2, 2]),        # 4 × 90 s on 2 containers: [0, 180)
    (3, 0.0, [3, 3, 1]),        # 3 on [0, 90), 1 on [90, 180); polls at 10, 30, 50 | 70, 90, 110 | 130, ...
    (2, 30.0, [2, 2, 2]),       # steps count from the submission
    (4, 0.0, [4, 4]),           # all at once for 90 s: the poll at 70 s sees 4
    (4, 85.0, [4, 4]),
])
def test_polled_usage_is_the_largest_poll_per_minute(allocation: int, start: float, expected: list[int]) -> None:
    job = tasks_of(4, 90.0)
    run = DagRun(job, draw(job, np.random.default_rng(0)), allocation, start_s=start)
    run.run_to_end()
    assert polled_usage(run, start).tolist() == pytest.approx(expected)


def test_history_is_the_unconstrained_run() -> None:
    r = a_run(2, 1000.0)
    assert (r.makespan_s, r.peak, r.run_id) == (90.0, 4, "job#2")
    assert r.usage.tolist() == pytest.approx([4, 4])


def test_recurring_jobs_are_dag_shapes_in_daily_slots() -> None:
    def spec(i: int, shape: str, t: float):  # type: ignore[no-untyped-def]
        return build_job(f"x{i}", t, [(f"M1{shape}", np.full(3, 10.0), 1, 512, []),
                                      (f"R2_1{shape}", np.full(2, 20.0), 2, 2048, [0])], name=f"j_{i}")
    specs = [spec(d, "", d * DAY_S + 7 * 3600 + d * 60) for d in range(6)]          # A at ~07:00, 6 days
    specs.append(spec(90, "", 2 * DAY_S + 7.5 * 3600))                                 # A again on day 2, same slot
    specs += [spec(10 + d, "", d * DAY_S + 21 * 3600) for d in range(5)]              # A at 21:00, 5 days only
    specs += [spec(20 + d, "b", d * DAY_S + 3 * 3600) for d in (0, 1, 2, 4, 5, 6)]    # B at 03:00, 6 days
    jobs = recurring_jobs(specs, min_days=6, min_stages=2)
    assert [(j.name, j.days) for j in jobs] == [("j_0@07:03", [0, 1, 2, 3, 4, 5]), ("j_20@03:00", [0, 1, 2, 4, 5, 6])]
    assert jobs[0].runs[2].name == "j_2"  # the first run of the day in the slot
    assert jobs[0].container == Resources(2048, 2)


def test_fit_job_infers_the_window_and_fits_the_identical_runs_exactly() -> None:
    # Submit times of day vary without a trend (a steady 10 s later every day would be a period
    # of 86,410 s, which the §4 fit now reports as such: noise-free data pins it).
    runs = [a_run(d, 1000.0 + 10 * k) for d, k in enumerate([0, 3, 1, 5, 2, 4])]
    assert consumer_time(runs, 2.0) == pytest.approx(np.percentile([1090 + 10 * d for d in range(6)], 95) + 2 * 90)
    f = fit_job(recurring(), runs, 5000.0, 0.01, seed=1)
    assert f.terms is not None, f.why
    # T_inAvail: the upstream's write, 1 s before each submission
    assert f.terms.period_s == DAY_S and f.terms.earliest_s == pytest.approx(np.percentile([999 + 10 * d for d in range(6)], 95))
    assert 5000.0 <= f.terms.deadline_s <= 5060.0  # the consumer's read, jittered by U(0, 60) s
    assert f.terms.memory_mb == (4 * 1024, 4 * 1024) and f.terms.vcores == (4, 4)
    assert p95_peak(runs) == 4


def test_a_run_no_poll_saw_is_left_out_of_the_skyline_as_live() -> None:
    """A 5-s run ends before the first poll (10 s after its submission): its polled skyline is
    empty. The live refit leaves such runs out; before, the simulator passed it to the LP, which
    refused the whole fold ("runs with no memory_mb in use cannot be fitted") and the job got no
    skyline at all (the Alibaba 2017 hourly jobs lost 160 folds so)."""
    runs = [a_run(d, 1000.0 + 10 * d) for d in range(5)] + [a_run(5, 1050.0, n=1, secs=5.0)]
    assert not runs[-1].usage.any()
    f = fit_job(recurring(), runs, 5000.0, 0.01, seed=1)
    assert f.terms is not None and f.terms.vcores == (4, 4), f.why


def test_a_consumer_before_the_inputs_arrive_gives_no_reservation() -> None:
    runs = [a_run(d, 1000.0) for d in range(6)]
    f = fit_job(recurring(), runs, 500.0, 0.01, seed=1)
    assert f.terms is None and f.why.startswith("SLO:")


def test_static_day_holds_the_level_until_the_job_ends() -> None:
    r = a_run(1, 600.0)
    jd = JobDay(recurring(), r, DAY_S + 600.0 + 170.0, terms=None)  # type: ignore[arg-type]
    res = static_day([jd], {"job": 2})
    o = res.outcomes[0]
    assert o.finish_s == DAY_S + 780.0 and not o.met and o.held_cs == 2 * 180.0
    assert (res.peak_memory_mb, res.peak_vcores) == (2048.0, 2.0)
    assert static_day([jd], {"job": 4}).outcomes[0].met  # 90 s at 4


def _window_job(submit_tod: float, static: int = 2) -> JobDay:
    """4 tasks of 60 s (240 container-s); the skyline reserves 1 container for 3 minutes in [0, 600 s]."""
    job = tasks_of(4, 60.0)
    run = observe("job", 1, job, draw(job, np.random.default_rng(0)), DAY_S + submit_tod)
    terms = Terms(DAY_S, 0.0, 600.0, 0.0, 60.0, (1024,) * 3, (1,) * 3)
    return JobDay(recurring(), run, DAY_S + 600.0, terms, static_level=static)


def test_without_dra_a_job_slower_than_its_skyline_falls_back_to_its_static_share_at_the_window_end() -> None:
    """Before: cut at the window's end (180 s) with its last task unstarted, a miss. Now the run
    keeps its user's static request (2) from then on: [180, 240), met (decisions/static_fallback)."""
    res = morpheus_day([_window_job(0.0)], 1, Resources(10 * 1024, 10), dra=False)
    o = res.outcomes[0]
    assert o.met and o.note == CUT and o.finish_s == DAY_S + 240.0 and o.grants == 0
    assert (o.held_cs, o.static_cs) == (180.0 + 2 * 60.0, 2 * 60.0)
    assert res.peak_vcores == 2.0, "the static share is held (and counted) after the reservation"


@pytest.mark.parametrize("static, finish, held", [
    (1, 140.0, 2 * 120.0 + 60.0 + 60.0),
    (2, 140.0, 2 * 120.0 + 60.0 + 60.0),
    (4, 80.0, 4 * 120.0 + 60.0),       # its static share (4) raises the cap: 4 for 2 minutes, done at 80 s
])
def test_dra_grants_rho_times_the_recent_skyline_or_the_static_share_and_the_job_finishes(
        static: int, finish: float, held: float) -> None:
    # t=20 s: demand 1 running + 3 ready = 4 > 1 reserved; cap max(ρ·max(R_recent), static) = 2 → 2
    # containers for steps 0-1; tasks run [0,60) [20,80) [60,120) [80,140); at 120 s the demand (1)
    # fits the skyline, but the window ends at 180 s, before DRA looks again (T = 60 s): it is
    # stretched by one minute of 1 container (§7; the job ends at 140 s, so that minute is the price
    # of deciding T ahead). With a static share of 4 the grant is 4 for 2 minutes: [0,60) [20,80) x3
    jd = _window_job(0.0)
    res = morpheus_day([JobDay(jd.job, jd.run, jd.deadline_s, jd.terms, static)], 1, Resources(10 * 1024, 10), dra=True)
    o = res.outcomes[0]
    assert o.met and o.finish_s == DAY_S + finish and o.note == ""
    assert o.held_cs == held


@pytest.mark.parametrize("tick", [5.0, 7.5, 15.0, 20.0])
def test_dra_extends_the_window_of_a_job_still_running_at_its_end(tick: float) -> None:
    """4 tasks × 90 s, skyline 1 container × 3 min in [0, 600 s] (docs/evaluation/morpheus.md's hand
    case). At the first tick t the demand 4 > 1 gets 2 containers until 120 s: tasks run [0, 90),
    [t, 90 + t), [90, 180), [90 + t, 180 + t). The planned window ends at 180 s with the last task
    still running; §7 stretches it by a minute, so the job ends at 180 + t instead of being cut."""
    job = tasks_of(4, 90.0)
    run = observe("job", 1, job, draw(job, np.random.default_rng(0)), DAY_S)
    jd = JobDay(recurring(), run, DAY_S + 600, Terms(DAY_S, 0.0, 600.0, 0.0, 60.0, (1024,) * 3, (1,) * 3), 1)
    o = morpheus_day([jd], 1, Resources(10 * 1024, 10), dra=True, tick_s=tick).outcomes[0]
    assert o.met and o.note == "" and o.finish_s == DAY_S + 180.0 + tick
    assert o.held_cs == 60.0 * (2 + 2 + 2 + 2 + 1), "2 containers for 4 minutes, then 1 for the extra minute"


def test_dra_finds_no_room_in_a_full_cluster_but_stretches_into_the_free_minutes_after() -> None:
    # 1 container of capacity: no grant above the skyline's 1 container inside the window, so the
    # tasks run one at a time [0,60) [60,120) [120,180) [180,240); after 180 s the cluster is free
    # and the window is stretched a minute at a time (grants at 120 and 180 s) until the job ends
    # (its static share, 1 container, is no better than the stretch)
    res = morpheus_day([_window_job(0.0, static=1)], 1, Resources(1024, 1), dra=True)
    o = res.outcomes[0]
    assert o.met and o.finish_s == DAY_S + 240.0 and o.grants == 2 and o.held_cs == 5 * 60.0
    assert res.peak_vcores == 1.0, "never above the cluster"


@pytest.mark.parametrize("agent, peak, finish", [("lowcost", 1.0, 240.0), ("greedy", 2.0, 120.0)])
def test_lowcost_stretches_the_skyline_and_greedy_keeps_it(agent: str, peak: float, finish: float) -> None:
    """Skyline 2 containers × 2 steps in [0, 600 s]: LowCost lowers the peak to 1 container × 4 steps
    (gang 1, §5 "stretched over time"); greedy places it as fitted at the earliest offset."""
    from harvester.decisions import reservation_packing
    jd = _window_job(0.0)
    jd = JobDay(jd.job, jd.run, jd.deadline_s, Terms(DAY_S, 0.0, 600.0, 0.0, 60.0, (2048, 2048), (2, 2)), 1)
    res = morpheus_day([jd], 1, Resources(10 * 1024, 10), dra=False, agent=getattr(reservation_packing, agent))
    o = res.outcomes[0]
    assert (res.peak_vcores, o.finish_s, o.held_cs, o.met) == (peak, DAY_S + finish, 240.0, True)


def test_inputs_after_the_window_run_on_the_static_share() -> None:
    """Before: never run, a miss. Now: 4 × 60 s on the static 2 containers from the submission (400 s)."""
    res = morpheus_day([_window_job(400.0)], 1, Resources(10 * 1024, 10), dra=True)
    o = res.outcomes[0]
    assert o.note == LATE_INPUT and o.met and o.finish_s == DAY_S + 520.0 and o.static_cs == 2 * 120.0


def test_summary_ratios() -> None:
    rows = [{"policy": p, "alpha": a, "met": m, "held_cs": 3600.0, "grants": g, "note": n, "static_cs": 1800.0 if n else 0.0}
            for p, a, m, g, n in [("user", None, False, 0, ""), ("user", None, False, 0, ""), ("user", None, True, 0, ""),
                                  ("p95", None, True, 0, ""), ("p95", None, False, 0, ""), ("p95", None, True, 0, ""),
                                  ("morpheus", 0.01, True, 0, NO_RESERVATION), ("morpheus", 0.01, True, 0, CUT),
                                  ("morpheus", 0.01, True, 3, "")]]
    days = [{"policy": "user", "alpha": None, "peak_memory_mb": 100.0, "peak_vcores": 10.0},
            {"policy": "p95", "alpha": None, "peak_memory_mb": 50.0, "peak_vcores": 8.0},
            {"policy": "morpheus", "alpha": 0.01, "peak_memory_mb": 40.0, "peak_vcores": 4.0,
             "p95_same_jobs_peak_vcores": 5.0}]
    s = summary(rows, days)
    assert s["p95"]["fewer_violations_vs_user"] == 2.0 and s["morpheus[α=0.01]"]["fewer_violations_vs_user"] is None
    assert s["morpheus[α=0.01]"]["footprint_vcores_vs_user"] == 0.4 and s["morpheus[α=0.01]"]["footprint_vcores_vs_p95"] == 0.5
    assert s["morpheus[α=0.01]"]["footprint_vcores_vs_p95_same_jobs"] == 0.8 and s["p95"]["footprint_vcores_vs_p95_same_jobs"] == 1.0
    assert s["morpheus[α=0.01]"]["grants"] == 3 and s["user"]["container_hours"] == 3.0
    assert (s["morpheus[α=0.01]"]["static_runs"], s["morpheus[α=0.01]"]["unreserved_runs"]) == (2, 1)
    assert s["morpheus[α=0.01]"]["static_container_hours"] == 1.0


def test_cli_rejects_missing_traces_and_bad_alphas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert harvester_main(["evaluate", "morpheus", "--traces", str(tmp_path)]) == 2
    assert "traces not found" in capsys.readouterr().err
    assert harvester_main(["evaluate", "morpheus", "--traces", str(TRACES_DIR), "--alphas", "2"]) == 2
    assert harvester_main(["evaluate", "morpheus", "--traces", str(TRACES_DIR), "--slack", "3,1"]) == 2


def test_cli_end_to_end_on_one_real_daily_job(tmp_path: Path) -> None:
    code = harvester_main(["evaluate", "morpheus", "--traces", str(TRACES_DIR), "--job", "j_3458354@00:46",
                           "--alphas", "0.01", "--seeds", "1", "--out", str(tmp_path), "--quiet"])
    assert code == 0
    doc = json.loads((tmp_path / "morpheus-results.json").read_text())
    assert [j["job"] for j in doc["jobs"]] == ["j_3458354@00:46"] and doc["jobs"][0]["days"] == 7
    evaluated = len(doc["slos"])
    assert evaluated + len(doc["excluded"]) == 7
    assert {k: v["runs"] for k, v in doc["summary"].items()} == {
        k: evaluated for k in ("user", "p95", "morpheus[α=0.01]", "morpheus+dra[α=0.01]", "greedy[α=0.01]",
                               "greedy+dra[α=0.01]")}
    assert "--job j_3458354@00:46" in doc["command"]
    assert "| morpheus+dra[α=0.01] |" in (tmp_path / "morpheus-results.md").read_text()
    assert (tmp_path / "img" / "morpheus.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
