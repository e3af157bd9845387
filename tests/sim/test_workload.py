"""Job DAGs, coarsening, and the synthetic generator fitted to Alibaba 2018."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.sim.synthetic import WorkloadParams, fit_workload, generate_jobs
from harvester.sim.workload import JobSpec, StageSpec, build_job, coarsen, scale_durations, topological_order


def test_build_job_orders_stages_topologically() -> None:
    j = build_job("j", 5.0, [("R", np.ones(2), 1, 100, [1]), ("M", np.ones(3), 1, 100, [])])
    assert [s.name for s in j.stages] == ["M", "R"] and j.stages[1].parents == (0,)
    assert j.tasks == 5 and j.max_concurrent_tasks() == 3
    with pytest.raises(ValueError, match="cycle"):
        topological_order([[1], [0]])


def test_jobspec_rejects_bad_stages() -> None:
    with pytest.raises(ValueError, match="earlier stages"):
        JobSpec("j", 0.0, (StageSpec("a", np.ones(1), parents=(0,)),))
    with pytest.raises(ValueError, match="no tasks"):
        JobSpec("j", 0.0, (StageSpec("a", np.ones(0)),))


def test_coarsen_conserves_work() -> None:
    d = np.arange(1.0, 11.0)
    c = coarsen(d, 3)
    assert c.size == 3 and c.sum() == d.sum()
    assert coarsen(d, None) is d and coarsen(d, 20) is d


def test_scale_durations() -> None:
    j = build_job("j", 0.0, [("a", np.array([2.0, 4.0]), 2, 10, [])])
    (k,) = scale_durations([j], 1.5)
    assert list(k.stages[0].durations_s) == [3.0, 6.0] and k.task_seconds() == 18.0


def test_generator_counts_recurrence_and_determinism() -> None:
    params = WorkloadParams.load()
    jobs = generate_jobs(params, jobs=400, horizon_s=86400, rng=np.random.default_rng(1), max_tasks_per_stage=30)
    again = generate_jobs(params, jobs=400, horizon_s=86400, rng=np.random.default_rng(1), max_tasks_per_stage=30)
    assert len(jobs) == 400 and [j.job_id for j in jobs] == [j.job_id for j in again]
    assert all(np.array_equal(a.stages[0].durations_s, b.stages[0].durations_s) for a, b in zip(jobs, again))
    rec = [j for j in jobs if j.recurring]
    assert len(rec) == 240
    by_name: dict[str, list[JobSpec]] = {}
    for j in rec:
        by_name.setdefault(j.name, []).append(j)
    runs = max(by_name.values(), key=len)
    gaps = np.diff([r.submit_s for r in runs])
    assert np.allclose(gaps, runs[0].period_s), "a recurring job is re-submitted every period"
    assert [len(s.durations_s) for s in runs[0].stages] == [len(s.durations_s) for s in runs[1].stages]
    assert all(0 <= j.submit_s < 86400 for j in jobs)
    assert max(s.tasks for j in jobs for s in j.stages) <= 30


def test_fit_workload_reads_shapes() -> None:
    jobs = [build_job(f"j{i}", 0.0, [("M", np.full(4, 10.0), 1, 256, []), ("R", np.full(2, 20.0), 2, 512, [0])])
            for i in range(5)]
    p = fit_workload(jobs, source="test")
    assert p.stages_per_job[0] == p.stages_per_job[-1] == 2
    assert p.p_no_parent == 0.0 and p.mean_extra_parents == 0.0
    assert p.vcores_probs == {"1": 0.5, "2": 0.5}
    assert min(p.stage_duration_s) == 10.0 and max(p.stage_duration_s) == 20.0


def _instantiate_per_stage(t, p: WorkloadParams, rng: np.random.Generator, run_sigma: float) -> tuple[StageSpec, ...]:
    """The reference: one run, a lognormal call per stage (what `_instantiate` batches)."""
    stages = []
    for name, median, tasks, vcores, mem, parents in t.stages:
        m = median * (rng.lognormal(0.0, run_sigma) if run_sigma > 0 else 1.0)
        durations = np.maximum(1.0, m * rng.lognormal(0.0, p.within_stage_sigma, tasks))
        stages.append(StageSpec(name, durations, vcores, mem, parents))
    return tuple(stages)


@pytest.mark.parametrize("seed", range(12))
def test_batched_runs_draw_the_same_durations_as_one_call_per_stage(seed: int) -> None:
    from harvester.sim.synthetic import _instantiate, _template

    p = WorkloadParams.load()
    t = _template(p, np.random.default_rng(seed), 50 if seed % 2 else None)
    for run_sigma, runs in ((0.1, 6), (0.0, 1), (0.0, 3), (0.3, 1)):
        fast, ref = np.random.default_rng(seed + 100), np.random.default_rng(seed + 100)
        got = _instantiate(t, p, fast, run_sigma, runs)
        want = [_instantiate_per_stage(t, p, ref, run_sigma) for _ in range(runs)]
        assert fast.bit_generator.state == ref.bit_generator.state  # the stream is left where it was
        for g, w in zip(got, want, strict=True):
            for a, b in zip(g, w, strict=True):
                assert (a.name, a.vcores, a.memory_mb, a.parents) == (b.name, b.vcores, b.memory_mb, b.parents)
                assert np.array_equal(a.durations_s, b.durations_s)  # bit for bit
                assert float(a.durations_s.sum()) == float(b.durations_s.sum())

