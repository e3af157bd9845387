"""Constraint Resource Vector and M/G/1 queueing-delay estimates (Phoenix, paper 003) — pure.

Paper 003 §I defines the Constraint Resource Vector (CRV) as a vector over node resources
(cpu, mem, disk, os, clock, net bandwidth) and uses "CRV demand (tasks asking for the
resource) and supply (total available resources) ratio of constrained resources to determine
the estimated queuing delay and an M/G/1 queuing model ... to dynamically reorder tasks";
contribution 3: "a queuing model to estimate the waiting times of highly contentious resources".

- `crv_ratio(demand, supply)`: the CRV entry of one constrained resource (one constraint
  dimension, e.g. `cores>=16`): tasks asking for it over the supply that satisfies it.
- `pollaczek_khinchine_wait`: the mean wait in queue of an M/G/1 server,
  W = λ·E[S²] / (2·(1 − ρ)), ρ = λ·E[S] (Pollaczek–Khinchine); infinite when ρ ≥ 1.
- `class_waits`: the M/G/1 wait per constraint class. A class is the set of nodes satisfying
  a task's constraints. The paper does not spell out how overlapping classes share nodes; our
  model: every server (task slot) is an M/G/1 queue; class k's arrivals (rate λ_k) spread
  evenly over the S_k slots it may use, so a slot on node n sees
  ρ(n) = Σ_k [n ∈ N_k] λ_k·E[S_k]/S_k + u_bg(n) and
  Λ₂(n) = Σ_k [n ∈ N_k] λ_k·E[S_k²]/S_k; class k then waits, with its slots' mean load
  ρ̄_k and mean Λ̄₂_k, W_k = Λ̄₂_k / (2·(1 − ρ̄_k)). The observed utilization of a node (its
  used share, from the RM or the simulator) is a floor on ρ(n): work the estimator did not see
  arrive (containers the RM placed itself, long jobs) still occupies slots, and taking the
  maximum rather than the sum does not count twice the work it did see. A class with no slot
  (or ρ̄ ≥ 1) waits forever: its estimate is infinite.
- `fit_class_loads`: arrival rate and service moments per class from the arrivals of the
  last `window_s` (the "succinct sharing of demand supply information" a node monitor has).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class ServiceMoments:
    """E[S] (s) and E[S²] (s²) of the service time of a class's tasks."""

    mean_s: float
    second_moment_s2: float

    @staticmethod
    def of(durations_s: Sequence[float] | np.ndarray) -> ServiceMoments:
        d = np.asarray(durations_s, dtype=float)
        if d.size == 0:
            raise ValueError("service moments need at least one duration")
        if np.any(d < 0) or not np.all(np.isfinite(d)):
            raise ValueError("durations must be finite and >= 0")
        return ServiceMoments(float(d.mean()), float((d * d).mean()))

    @staticmethod
    def deterministic(duration_s: float) -> ServiceMoments:
        return ServiceMoments(duration_s, duration_s * duration_s)


def crv_ratio(demand: float, supply: float) -> float:
    """Demand over supply of one constrained resource; no supply and some demand is infinite."""
    if demand < 0 or supply < 0:
        raise ValueError("demand and supply must be >= 0")
    if supply == 0:
        return math.inf if demand > 0 else 0.0
    return demand / supply


def pollaczek_khinchine_wait(arrival_rate: float, moments: ServiceMoments) -> float:
    """Mean wait in queue of an M/G/1 server: λ·E[S²] / (2·(1 − ρ)), ρ = λ·E[S]."""
    if arrival_rate < 0:
        raise ValueError("arrival rate must be >= 0")
    rho = arrival_rate * moments.mean_s
    if rho >= 1.0:
        return math.inf
    return arrival_rate * moments.second_moment_s2 / (2.0 * (1.0 - rho))


@dataclass(frozen=True, slots=True)
class ClassLoad:
    """Arrivals of one constraint class: rate (tasks/s) and their service-time moments."""

    rate_per_s: float
    moments: ServiceMoments


@dataclass(frozen=True, slots=True)
class ClassWaits:
    """Per class (rows of the masks): slots it may use, their mean load, and the M/G/1 wait."""

    slots: np.ndarray
    utilization: np.ndarray
    wait_s: np.ndarray


@dataclass(frozen=True, slots=True)
class NodeLoads:
    """Per node: the load ρ(n) and Λ₂(n) = Σ λ·E[S²] per slot that the classes put on it."""

    slots: np.ndarray
    rho: np.ndarray
    lambda_m2: np.ndarray


def node_loads(masks: np.ndarray, slots_per_node: np.ndarray, loads: Sequence[ClassLoad],
               observed_utilization: np.ndarray | None = None) -> NodeLoads:
    """Spread every class's arrivals evenly over the slots it may use (module docstring).

    `masks` is K×N (booleans or 0/1 floats: class k may use node n), `slots_per_node` N task
    slots (0 = the node takes no task now), `loads` the K classes' arrivals,
    `observed_utilization` N fractions in [0, 1]. Matrix-vector products only: no K×N temporaries."""
    m = _matrix(masks)
    k, n = m.shape
    if len(loads) != k or np.shape(slots_per_node) != (n,):
        raise ValueError("one load per class and one slot count per node")
    slots = np.asarray(slots_per_node, dtype=np.float64)
    s_k = _rows(m, slots[None, :])[0]
    rate = np.array([x.rate_per_s for x in loads], dtype=float)
    mean = np.array([x.moments.mean_s for x in loads], dtype=float)
    m2 = np.array([x.moments.second_moment_s2 for x in loads], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_slot_rho = np.where(s_k > 0, rate * mean / s_k, 0.0)
        per_slot_m2 = np.where(s_k > 0, rate * m2 / s_k, 0.0)
    has_slot = slots > 0
    rho_n, lam2_n = (_columns(np.stack([per_slot_rho, per_slot_m2]), m) * has_slot) if k else np.zeros((2, n))
    if observed_utilization is not None:
        rho_n = np.maximum(rho_n, np.clip(np.asarray(observed_utilization, dtype=float), 0.0, 1.0))
    return NodeLoads(slots, rho_n, lam2_n)


def waits_over(masks: np.ndarray, loaded: NodeLoads) -> ClassWaits:
    """M/G/1 wait of each class (row of `masks`) on nodes loaded as `loaded`; a row may be a class
    that only asks "how long would I wait?" (it need not be among the classes that loaded them)."""
    m = _matrix(masks)
    s_k, rho_sum, lam2_sum = _rows(m, np.stack([loaded.slots, loaded.slots * loaded.rho, loaded.slots * loaded.lambda_m2]))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho_k = np.where(s_k > 0, rho_sum / s_k, 0.0)
        lam2_k = np.where(s_k > 0, lam2_sum / s_k, 0.0)
        wait = np.where(rho_k < 1.0, lam2_k / (2.0 * (1.0 - rho_k)), np.inf)
    wait = np.where(s_k == 0, np.inf, wait)  # nowhere to run: never starts
    return ClassWaits(slots=s_k, utilization=rho_k, wait_s=wait)


def _rows(m: np.ndarray, vs: np.ndarray) -> np.ndarray:
    """m @ v for every row v of `vs` (J×N -> J×K) in one pass over m, without upcasting m, on
    numpy's own loop: BLAS threads only slow these small products down on a busy host."""
    return np.einsum("kn,jn->jk", m, np.asarray(vs, dtype=m.dtype)).astype(np.float64)


def _columns(cs: np.ndarray, m: np.ndarray) -> np.ndarray:
    """c @ m for every row c of `cs` (J×K -> J×N), as `_rows`."""
    return np.einsum("jk,kn->jn", np.asarray(cs, dtype=m.dtype), m).astype(np.float64)


def _matrix(masks: np.ndarray) -> np.ndarray:
    m = np.asarray(masks)
    if m.ndim != 2:
        raise ValueError("masks must be K×N")
    return m if m.dtype in (np.float32, np.float64) else m.astype(np.float32)


def class_waits(masks: np.ndarray, slots_per_node: np.ndarray, loads: Sequence[ClassLoad],
                observed_utilization: np.ndarray | None = None) -> ClassWaits:
    """M/G/1 wait per class over overlapping node sets: `node_loads` then `waits_over` the same rows."""
    return waits_over(masks, node_loads(masks, slots_per_node, loads, observed_utilization))


@dataclass(frozen=True, slots=True)
class Arrivals:
    """`count` tasks of class `key` seen at `time` with durations summing to `sum_s`, squares to `sum_sq_s2`."""

    time: float
    key: str
    count: int
    sum_s: float
    sum_sq_s2: float


def fit_class_loads(arrivals: Iterable[Arrivals], now: float, window_s: float,
                    default: ServiceMoments) -> dict[str, ClassLoad]:
    """Rate = tasks seen in (now − window_s, now] / window_s; moments from their durations.

    A class whose arrivals carried no duration (all zero) gets `default` moments."""
    if window_s <= 0:
        raise ValueError("window_s must be > 0")
    sums: dict[str, list[float]] = {}
    for a in arrivals:
        if now - window_s < a.time <= now:
            acc = sums.setdefault(a.key, [0.0, 0.0, 0.0])
            acc[0] += a.count
            acc[1] += a.sum_s
            acc[2] += a.sum_sq_s2
    out: dict[str, ClassLoad] = {}
    for key, (count, s1, s2) in sums.items():
        if count <= 0:
            continue
        moments = ServiceMoments(s1 / count, s2 / count) if s1 > 0 else default
        out[key] = ClassLoad(count / window_s, moments)
    return out


def mixture(loads: Mapping[str, ClassLoad]) -> ServiceMoments | None:
    """Rate-weighted service moments of several classes (None without arrivals)."""
    total = sum(x.rate_per_s for x in loads.values())
    if total <= 0:
        return None
    mean = sum(x.rate_per_s * x.moments.mean_s for x in loads.values()) / total
    m2 = sum(x.rate_per_s * x.moments.second_moment_s2 for x in loads.values()) / total
    return ServiceMoments(mean, m2)
