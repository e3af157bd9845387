"""CRV arithmetic and the M/G/1 (Pollaczek-Khinchine) estimate on hand-computed cases (paper 003)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harvester.models.queueing import (
    Arrivals, ClassLoad, ServiceMoments, class_waits, crv_ratio, fit_class_loads, pollaczek_khinchine_wait,
)


@pytest.mark.parametrize(("demand", "supply", "ratio"), [(10, 4, 2.5), (3, 12, 0.25), (0, 0, 0.0), (3, 0, math.inf)])
def test_crv_ratio(demand: float, supply: float, ratio: float) -> None:
    assert crv_ratio(demand, supply) == ratio


def test_pk_deterministic_service() -> None:
    # λ = 0.5/s, S = 1 s: ρ = 0.5, W = 0.5·1 / (2·0.5) = 0.5 s (M/D/1)
    assert pollaczek_khinchine_wait(0.5, ServiceMoments.deterministic(1.0)) == pytest.approx(0.5)


def test_pk_exponential_service_is_mm1() -> None:
    # E[S] = 1, E[S²] = 2 (exponential): W = 0.5·2 / (2·0.5) = 1.0 = ρ/(μ−λ) of M/M/1
    assert pollaczek_khinchine_wait(0.5, ServiceMoments(1.0, 2.0)) == pytest.approx(1.0)


def test_pk_from_sampled_durations() -> None:
    m = ServiceMoments.of([1.0, 3.0])  # E[S] = 2, E[S²] = (1 + 9)/2 = 5
    assert (m.mean_s, m.second_moment_s2) == (2.0, 5.0)
    # λ = 0.25: ρ = 0.5, W = 0.25·5 / (2·0.5) = 1.25 s
    assert pollaczek_khinchine_wait(0.25, m) == pytest.approx(1.25)


def test_pk_saturated_is_infinite() -> None:
    assert pollaczek_khinchine_wait(1.0, ServiceMoments.deterministic(1.0)) == math.inf
    assert pollaczek_khinchine_wait(0.0, ServiceMoments.deterministic(5.0)) == 0.0


def test_class_waits_over_overlapping_node_sets() -> None:
    # Two nodes, one slot each. Class A may use node 0 only (λ 0.25, S = 1 s);
    # class B both nodes (λ 0.5, S = 1 s, i.e. 0.25 per slot).
    # node 0: ρ = 0.25 + 0.25 = 0.5, Λ₂ = 0.5; node 1: ρ = 0.25, Λ₂ = 0.25.
    # A: W = 0.5 / (2·(1 − 0.5)) = 0.5 s. B: ρ̄ = 0.375, Λ̄₂ = 0.375, W = 0.375 / 1.25 = 0.3 s.
    masks = np.array([[True, False], [True, True]])
    det = ServiceMoments.deterministic(1.0)
    w = class_waits(masks, np.array([1.0, 1.0]), [ClassLoad(0.25, det), ClassLoad(0.5, det)])
    assert w.slots.tolist() == [1.0, 2.0]
    assert w.utilization.tolist() == pytest.approx([0.5, 0.375])
    assert w.wait_s.tolist() == pytest.approx([0.5, 0.3])


def test_observed_utilization_is_a_floor_and_no_slot_never_starts() -> None:
    masks = np.array([[True, False], [False, False]])
    det = ServiceMoments.deterministic(1.0)
    # node 0 is 90% busy with work the model did not see: ρ = max(0.25, 0.9) = 0.9,
    # W = 0.25·1 / (2·0.1) = 1.25 s
    w = class_waits(masks, np.array([1.0, 1.0]), [ClassLoad(0.25, det), ClassLoad(0.0, det)], np.array([0.9, 0.0]))
    assert w.wait_s[0] == pytest.approx(1.25)
    assert w.wait_s[1] == math.inf


def test_fit_class_loads_over_the_window() -> None:
    arrivals = [Arrivals(0.0, "isa=arm", 5, 50.0, 600.0),     # outside (now − 100, now]
                Arrivals(150.0, "isa=arm", 10, 40.0, 200.0),
                Arrivals(190.0, "*", 20, 0.0, 0.0)]           # no durations: default moments
    loads = fit_class_loads(arrivals, now=200.0, window_s=100.0, default=ServiceMoments(7.0, 49.0))
    assert loads["isa=arm"].rate_per_s == pytest.approx(0.1)
    assert (loads["isa=arm"].moments.mean_s, loads["isa=arm"].moments.second_moment_s2) == (4.0, 20.0)
    assert loads["*"].rate_per_s == pytest.approx(0.2) and loads["*"].moments.mean_s == 7.0


@pytest.mark.parametrize("bad", [[-1.0], [math.nan], []])
def test_moments_refuse_bad_durations(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        ServiceMoments.of(bad)
