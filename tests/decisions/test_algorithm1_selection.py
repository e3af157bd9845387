"""Algorithm 1 (OSDI'16 §4.1): headroom, ranking weights, single / several / no classes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from harvester.decisions.class_selection import (
    DEFAULT_WEIGHTS, ClassState, JobDemand, characterize, headroom_containers, headroom_fraction, select_classes,
)
from harvester.domain import Resources
from harvester.models.job_history import DemandError, JobHistoryModel, JobRun, JobType, LengthThresholds, Stage, fit_job_history
from harvester.models.patterns import Pattern

C1 = Resources(2048, 1)


def cls(cid: str, pattern: Pattern, *, avg: float = 0.3, peak: float = 0.5, cur: float = 0.3, vcores: int = 100,
        allocated: int = 0, reserve: float = 0.0, mem_free: float | None = None) -> ClassState:
    return ClassState(cid, pattern, avg, peak, cur, Resources(vcores * 4096, vcores), Resources(allocated * 2048, allocated),
                      reserve, mem_free, nodes=vcores // 16)


def job(t: JobType, req: int, container: Resources = C1) -> JobDemand:
    return JobDemand("j", t, req, container, f"{t.value} job")


@pytest.mark.parametrize(
    ("job_type", "avg", "peak", "cur", "expected"),
    [
        (JobType.SHORT, 0.3, 0.8, 0.5, 0.5),    # 1 − current
        (JobType.MEDIUM, 0.3, 0.8, 0.5, 0.5),   # 1 − max(average, current)
        (JobType.MEDIUM, 0.6, 0.8, 0.5, 0.4),
        (JobType.LONG, 0.3, 0.8, 0.5, 0.2),     # 1 − max(peak, current)
        (JobType.LONG, 0.3, 0.8, 0.9, 0.1),
        (JobType.SHORT, 0.3, 0.8, 1.2, 0.0),    # clamped
    ],
)
def test_headroom_definitions(job_type: JobType, avg: float, peak: float, cur: float, expected: float) -> None:
    assert headroom_fraction(job_type, cls("c", Pattern.CONSTANT, avg=avg, peak=peak, cur=cur)) == pytest.approx(expected)


def test_headroom_in_containers_subtracts_reserve_and_allocation_and_respects_memory() -> None:
    c = cls("c", Pattern.CONSTANT, cur=0.2, vcores=100, allocated=10, reserve=0.1)
    # short: (0.8 − 0.1) × 100 − 10 = 60 vcores → 30 containers of 2 vcores
    assert headroom_containers(JobType.SHORT, c, Resources(1024, 2)) == 30
    assert headroom_containers(JobType.SHORT, cls("c", Pattern.CONSTANT, cur=0.2, mem_free=5000), Resources(1024, 1)) == 4
    assert headroom_containers(JobType.SHORT, cls("c", Pattern.CONSTANT, cur=0.99, allocated=50), C1) == 0
    with pytest.raises(ValueError):
        headroom_containers(JobType.SHORT, c, Resources(0, 1))


def test_one_fitting_class_is_chosen_alone() -> None:
    classes = [cls("small", Pattern.CONSTANT, vcores=10), cls("big", Pattern.UNPREDICTABLE, vcores=200, peak=0.4)]
    sel = select_classes(job(JobType.LONG, 50), classes, np.random.default_rng(0))
    assert [(c.class_id, c.containers) for c in sel.choices] == [("big", 50)]
    assert sel.choices[0].headroom == pytest.approx(0.6) and sel.choices[0].headroom_containers == 120
    assert sel.choices[0].weighted_headroom == 120 * DEFAULT_WEIGHTS[JobType.LONG][Pattern.UNPREDICTABLE]
    assert "line 10" in sel.reason and "big" in sel.reason


@pytest.mark.parametrize(
    ("job_type", "favourite"),
    [(JobType.LONG, Pattern.CONSTANT), (JobType.MEDIUM, Pattern.PERIODIC), (JobType.SHORT, Pattern.UNPREDICTABLE)],
)
def test_ranking_weights_prefer_the_papers_pattern_for_each_job_type(job_type: JobType, favourite: Pattern) -> None:
    classes = [cls(p.value, p, avg=0.3, peak=0.3, cur=0.3) for p in Pattern]  # equal headroom everywhere
    rng = np.random.default_rng(42)
    picks = Counter(select_classes(job(job_type, 10), classes, rng).choices[0].pattern for _ in range(3000))
    w = DEFAULT_WEIGHTS[job_type]
    for p in Pattern:  # probability ∝ weighted room = room × weight (line 10)
        assert picks[p] / 3000 == pytest.approx(w[p] / sum(w.values()), abs=0.03)
    assert picks.most_common(1)[0][0] is favourite


def test_several_classes_when_none_fits_alone() -> None:
    classes = [cls(f"c{i}", Pattern.PERIODIC, cur=0.0, avg=0.0, peak=0.0, vcores=30) for i in range(4)]
    sel = select_classes(job(JobType.MEDIUM, 70), classes, np.random.default_rng(1))
    assert len(sel.choices) == 3 and sum(c.containers for c in sel.choices) == 70
    assert all(c.containers <= c.headroom_containers for c in sel.choices)
    assert len({c.class_id for c in sel.choices}) == 3 and "line 13" in sel.reason


def test_no_class_when_nothing_fits_even_combined() -> None:
    classes = [cls("a", Pattern.CONSTANT, vcores=10), cls("b", Pattern.PERIODIC, vcores=10)]
    sel = select_classes(job(JobType.SHORT, 1000), classes, np.random.default_rng(0))
    assert sel.choices == () and "line 16" in sel.reason and sel.required_containers == 1000


def test_zero_weight_classes_are_never_picked() -> None:
    weights = {t: {Pattern.CONSTANT: 0.0, Pattern.PERIODIC: 1.0, Pattern.UNPREDICTABLE: 1.0} for t in JobType}
    classes = [cls("const", Pattern.CONSTANT, vcores=1000), cls("per", Pattern.PERIODIC, vcores=10)]
    rng = np.random.default_rng(0)
    assert select_classes(job(JobType.LONG, 3), classes, rng, weights=weights).choices[0].class_id == "per"
    assert select_classes(job(JobType.LONG, 500), classes, rng, weights=weights).choices == ()


def test_seeded_choice_is_deterministic_and_ignores_input_order() -> None:
    classes = [cls(f"c{i}", list(Pattern)[i % 3], vcores=40 + i) for i in range(12)]
    a = select_classes(job(JobType.MEDIUM, 5), classes, np.random.default_rng(9), model_version=4)
    b = select_classes(job(JobType.MEDIUM, 5), list(reversed(classes)), np.random.default_rng(9), model_version=4)
    assert a == b and a.model_version == 4


def test_characterize_combines_type_and_demand() -> None:
    hist = fit_job_history([JobRun("etl", "app_1", 0, 7200, 30)], min_runs=5)
    fb = LengthThresholds(300, 3600, "defaults")
    d = characterize("etl", history=hist, fallback_thresholds=fb, container=C1)
    assert d.job_type is JobType.LONG and d.required_containers == 30 and "peak of past runs" in d.reason
    d = characterize("new", history=JobHistoryModel(None), fallback_thresholds=fb, container=C1, dag=[Stage("m", 12)])
    assert d.job_type is JobType.MEDIUM and d.required_containers == 12
    with pytest.raises(DemandError):
        characterize("new", history=JobHistoryModel(None), fallback_thresholds=fb, container=C1)
    with pytest.raises(ValueError, match="last_run_seconds"):
        characterize("etl", history=hist, fallback_thresholds=fb, container=C1, last_run_s=-1)
    with pytest.raises(ValueError, match="container size"):
        characterize("etl", history=hist, fallback_thresholds=fb, container=Resources(1024, 0))


def test_the_tabulated_headroom_matches_the_definitions() -> None:
    rng = np.random.default_rng(5)
    classes = [cls(f"c{i}", list(Pattern)[i % 3], avg=float(a), peak=float(a + d), cur=float(c), vcores=int(v),
                   allocated=int(al), reserve=float(r), mem_free=None if i % 4 else float(m))
               for i, (a, d, c, v, al, r, m) in enumerate(zip(rng.uniform(0, 1, 60), rng.uniform(0, 0.4, 60),
                                                              rng.uniform(-0.1, 1.2, 60), rng.integers(1, 400, 60),
                                                              rng.integers(0, 50, 60), rng.uniform(0, 0.3, 60),
                                                              rng.uniform(0, 50000, 60)))]
    container = Resources(3000, 3)
    for t in JobType:
        sel = select_classes(job(t, 10**9, container), classes, np.random.default_rng(0))  # nothing fits: no choice
        assert sel.choices == ()
        for c in classes:
            one = select_classes(job(t, 1, container), [c], np.random.default_rng(0))
            room = headroom_containers(t, c, container)
            if room >= 1:
                assert one.choices[0].headroom_containers == room
                assert one.choices[0].headroom == pytest.approx(headroom_fraction(t, c))
            else:
                assert one.choices == ()
