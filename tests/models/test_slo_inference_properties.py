"""Properties of Morpheus §4 SLO inference (harvester.models.slo_inference) on SYNTHETIC NameNode
audit logs and RM apps in the recorded HDFS / YARN 3.3.6 format (tests/support/audit_synth.py),
parsed by the same code as live: pipelines of 2-5 stages, periods of 45 s .. a day, ±2 s clock
jitter, a late period that still meets the consumer's deadline, a slow stage that misses it,
missing periods, a recurring job nobody reads and an ad-hoc job reading an old output."""

from __future__ import annotations

import math

import pytest
from audit_synth import AdhocRead, PipelineTruth, chain, generate
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rm_client.wire.apps import decode_apps

from harvester.models.provenance import build_graph
from harvester.models.slo_inference import LATE, MISSED, SloModel, SloParams, fit_slo, window
from harvester.telemetry.provenance_log import parse_audit_log, runs_from_apps

PERIODS = (45.0, 90.0, 135.0, 600.0, 3600.0, 86_400.0)
DAY = 86_400.0


def infer(lines: list[str], apps: dict, params: SloParams = SloParams()) -> SloModel:
    parsed = parse_audit_log(lines)
    assert not parsed.problems
    return fit_slo(build_graph(parsed.accesses, runs_from_apps(decode_apps(apps))), params)


def predicted_deadline(model: SloModel, truth: PipelineTruth, stage: int, n: int) -> float:
    """The deadline the model predicts for stage `stage` of the period whose first stage is
    nominally submitted at its usual time in period n (any n, also ahead of the history)."""
    return window(model.job(truth.spec.stages[stage].name), truth.start(n) + truth.spec.submit_s)[1]


@st.composite
def scenario(draw):
    period = draw(st.sampled_from(PERIODS))
    k = draw(st.integers(2, 5))
    weights = draw(st.lists(st.floats(0.5, 2.0), min_size=k, max_size=k))
    work = period * draw(st.floats(0.15, 0.35))
    durations = [max(3.0, work * w / sum(weights)) for w in weights]
    gap = min(3.5, 0.02 * period)
    submit = max(3.0, period * draw(st.floats(0.03, 0.1)))
    periods = draw(st.integers(14, 30))
    probe = chain("/p", period, durations, submit_s=submit, read_s=None, periods=1, gap_s=gap)
    noise = PipelineTruth(probe).worst_end_shift()
    late_by = SloParams().late_fraction * period + 2 * probe.jitter_s + 1.0  # beyond the late-start line
    slack = late_by + 2 * noise + 6.0 + draw(st.floats(0.0, 0.2)) * period
    end = submit + sum(durations) + gap * k
    late_n, slow_n = draw(st.sampled_from([(4, 9), (9, 4), (6, 11)]))
    slow_stage = draw(st.integers(0, k - 1))
    factor = 1.0 + (slack + 2 * noise + 10.0) / durations[slow_stage]
    missing = frozenset(draw(st.sets(st.sampled_from([2, 7, 12, 13]), max_size=2)))
    spec = chain("/p", period, durations, submit_s=submit, read_s=end + slack, periods=periods, gap_s=gap,
                 late={late_n: late_by}, slow={slow_n: (slow_stage, factor)}, missing=missing)
    orphan = chain("/orphan", draw(st.sampled_from(PERIODS)), [10.0], submit_s=5.0, read_s=None, periods=periods)
    return spec, orphan, draw(st.integers(0, 2**16))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_a_pipeline_shares_one_period_and_its_deadlines_come_from_the_consumer(case) -> None:
    spec, orphan, seed = case
    last = spec.periods - 1
    adhoc = (AdhocRead(0, 3, (spec.first_period + last) * spec.period_s + spec.submit_s + 1.0),
             AdhocRead(1, 1, (orphan.first_period + orphan.periods) * orphan.period_s))
    lines, apps, (truth, _) = generate([spec, orphan], seed=seed, adhoc_reads=adhoc)
    (late_n, late_by), = spec.late.items()
    (slow_n, (slow_stage, _)), = spec.slow.items()
    # The scenario's margins hold in this draw: the late period met the consumer's time, the
    # slow one missed it, every other period met it.
    assume(truth.end(late_n) <= truth.deadline(late_n) - 3.0 and truth.end(slow_n) >= truth.deadline(slow_n) + 5.0)
    model = infer(lines, apps)
    names = [s.name for s in spec.stages]
    stages = [model.job(n) for n in names]
    for job in stages:
        # ONE period (exact), one grid, one pipeline, all actionable.
        assert job.period_s == spec.period_s and job.lcm_aligned, (job.job, job.period_s)
        assert job.pipeline == tuple(names) and job.actionable, job.reason
        assert len(job.periods) == spec.periods - len(spec.missing)
    # The end-to-end deadline: the consumer's time, predicted for the next period.
    assert abs(predicted_deadline(model, truth, -1, spec.periods) - truth.deadline(spec.periods)) <= 3.0
    # Stage deadlines are ordered and keep their distances in every period (no drift).
    ds = [j.deadline_s for j in stages]
    assert all(a < b for a, b in zip(ds, ds[1:]))
    for n in (spec.periods, spec.periods + 1000):
        pred = [predicted_deadline(model, truth, k, n) for k in range(len(names))]
        assert [b - a for a, b in zip(pred, pred[1:])] == pytest.approx([b - a for a, b in zip(ds, ds[1:])], abs=1e-6)
    # Late but met: stage 1 started late, nothing missed in that period.
    late_app = truth.app(late_n, 0)
    assert late_app in stages[0].late_runs and late_app in stages[0].runs_in(LATE)
    assert not any(truth.app(late_n, k) in j.missed_runs for k, j in enumerate(stages))
    # The slow stage missed, and so did every stage after it; the stages before it did not.
    for k, job in enumerate(stages):
        assert (truth.app(slow_n, k) in job.runs_in(MISSED)) is (k >= slow_stage), (k, slow_stage)
    # No other period missed.
    missed = {r for j in stages for r in j.missed_runs}
    assert missed == {truth.app(slow_n, k) for k in range(slow_stage, len(names))}
    # The decoys: nobody reads the orphan; the ad-hoc job read old outputs and consumes nothing.
    lonely = model.job(orphan.stages[0].name)
    assert not lonely.actionable and "output read in 0 of" in lonely.reason and lonely.consumers == ()
    assert stages[-1].consumers == ("client:CLI",)
    assert not any(c.startswith("adhoc") for j in model.jobs for c in j.consumers)
    assert all(not j.actionable and "too few runs" in j.reason for j in model.jobs if j.job.startswith("adhoc"))


@pytest.mark.parametrize("period", [600.0, 3600.0, DAY])
def test_thirty_days_of_history_predict_thirty_days_ahead_without_drift(period) -> None:
    durations = [period * 0.08, period * 0.12, period * 0.05]
    submit = period * 0.05
    read = submit + sum(durations) + 10.5 + period * 0.2
    spec = chain("/long", period, durations, submit_s=submit, read_s=read, periods=int(30 * DAY / period))
    lines, apps, (truth,) = generate([spec], seed=3)
    model = infer(lines, apps)
    ahead = spec.periods + int(30 * DAY / period)
    assert all(model.job(s.name).period_s == period for s in spec.stages)
    assert abs(predicted_deadline(model, truth, -1, ahead) - truth.deadline(ahead)) <= 2.0


@pytest.mark.parametrize(("period", "days", "aligned"), [
    (3480.0, 10, False),  # 58 minutes: a whole second that does not divide the day
    (3598.0, 10, False),  # ten days pin it: not an hour
    (135.0, 2, True),  # divides a day, not a whole minute
])
def test_a_period_need_not_be_whole_minutes_nor_divide_the_day(period, days, aligned) -> None:
    spec = chain("/odd", period, [period * 0.1, period * 0.1], submit_s=period * 0.1,
                 read_s=period * 0.1 + period * 0.2 + 7 + period * 0.2, periods=int(days * DAY / period))
    lines, apps, (truth,) = generate([spec], seed=5)
    model = infer(lines, apps)
    for s in spec.stages:
        assert (model.job(s.name).period_s, model.job(s.name).lcm_aligned) == (period, aligned)
    ahead = spec.periods + int(30 * DAY / period)
    assert abs(predicted_deadline(model, truth, -1, ahead) - truth.deadline(ahead)) <= 3.0


def test_a_period_the_data_cannot_pin_to_a_second_is_kept_as_fitted() -> None:
    # 97.37 s over a day: ±2 s jitter fits it to a few ms, no whole second is within 3 SE.
    spec = chain("/frac", 97.37, [10.0, 12.0], submit_s=8.0, read_s=8.0 + 22 + 7 + 20, periods=880)
    lines, apps, (truth,) = generate([spec], seed=9)
    model = infer(lines, apps)
    got = {model.job(s.name).period_s for s in spec.stages}
    assert len(got) == 1 and abs(got.pop() - 97.37) < 0.01 and not model.job(spec.stages[0].name).lcm_aligned
    ahead = spec.periods + int(30 * DAY / 97.37)
    assert abs(predicted_deadline(model, truth, -1, ahead) - truth.deadline(ahead)) <= 3.0


def test_a_recurring_job_nobody_reads_has_no_deadline_and_says_why() -> None:
    spec = chain("/nobody", 3600.0, [300.0, 200.0], submit_s=60.0, read_s=None, periods=24)
    lines, apps, _ = generate([spec], seed=1)
    model = infer(lines, apps)
    first, last = (model.job(s.name) for s in spec.stages)
    assert last.reason == f"stage 2 of 2 of pipeline {first.job} → {last.job}: output read in 0 of 24 periods (need 5)"
    assert not first.actionable and first.reason.endswith(f"no end-to-end deadline: {last.job}: output read in 0 of 24 "
                                                          "periods (need 5)")
    assert {p.state for j in (first, last) for p in j.periods} == {"no deadline"}
    assert all(p.missed_deadline is None for j in (first, last) for p in j.periods)
    assert math.isclose(first.period_s, 3600.0) and first.period_s == last.period_s


@pytest.mark.xfail(strict=True, reason="found by Hypothesis on 2026-11-29, not fixed: with a late and a slow period and "
                   "±2 s jitter over 18 runs, p-s1's period is fitted as 45.13 s, outside the snap tolerance of 45 s")
def test_known_case_a_45_s_pipeline_with_a_late_and_a_slow_period() -> None:
    from audit_synth import PipelineSpec, StageSpec

    spec = PipelineSpec(prefix="/p", stages=(StageSpec("p-s1", 5.625, 0.9), StageSpec("p-s2", 5.625, 0.9)),
                        period_s=45.0, submit_s=3.0, read_s=37.975, periods=19, first_period=39888889,
                        late={9: 7.25}, slow={4: (1, 8.217777777777778)}, missing=frozenset({2}), jitter_s=2.0)
    orphan = PipelineSpec(prefix="/orphan", stages=(StageSpec("orphan-s1", 10.0, 3.5),), period_s=45.0, submit_s=5.0,
                          read_s=None, periods=19, first_period=39888889, late={}, slow={}, missing=frozenset(),
                          jitter_s=2.0)
    test_a_pipeline_shares_one_period_and_its_deadlines_come_from_the_consumer.hypothesis.inner_test((spec, orphan, 1452))
