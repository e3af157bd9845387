"""Utilization classes: FFT patterns, then k-means within each pattern (OSDI'16 §4.1) — pure.

§4.1: "The clustering algorithm periodically (e.g., once per day) takes the most recent time
series of CPU utilizations from the average server of each primary tenant, runs the FFT
algorithm on the series, groups the tenants into the three patterns described in Section 3
(periodic, constant, unpredictable) based on their frequency profiles, and then uses the
K-Means algorithm to cluster the profiles in each pattern into classes. Clustering tags each
class with the utilization pattern, its average utilization, and its peak utilization. It
also maintains a mapping between the classes and their primary tenants."

Choices the paper leaves open (documented here):
- Features for k-means are (average, peak) utilization of each tenant — the two numbers the
  headroom definitions of §4.1 use. Both are fractions of a server, so no scaling is needed.
- k per pattern: the k in 2..min(`max_k`, distinct tenants − 1) with the best silhouette score
  (sklearn, on a seeded sample of at most `silhouette_sample` tenants); ties go to the smaller
  k. Fewer than 3 distinct tenants → one class. We always split a pattern with ≥ 3 distinct
  tenants: even without sharp cluster structure, classes at different utilization levels
  have different headroom, which is what Algorithm 1 ranks.
- A class's average and peak are the node-weighted means of its members' average and peak
  (with unit weights this is the k-means centroid). Class ids are "<pattern>-<i>", i ordered
  by (average, peak) ascending, so "constant-0" is the least loaded constant class.
- Deterministic: k-means and the silhouette sample use `seed`.
- Tenants without a single valid sample are left out of every class (`skipped`).

`fit` never reads a clock: `version` and `fitted_at` are passed in by the caller (the refit
loop); it never writes the store (principle 9).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from harvester.models.patterns import PATTERNS, Pattern, PatternParams, profile_patterns
from harvester.models.tenant_series import TenantSeries, stack_series


@dataclass(frozen=True, slots=True)
class ClassParams:
    """Parameters of one fit (persisted with the model so a fit can be reproduced)."""

    patterns: PatternParams = field(default_factory=PatternParams)
    max_k: int = 8
    seed: int = 0
    n_init: int = 4
    silhouette_sample: int = 2000

    def __post_init__(self) -> None:
        if self.max_k < 1 or self.n_init < 1 or self.silhouette_sample < 10:
            raise ValueError("max_k and n_init must be >= 1, silhouette_sample >= 10")


@dataclass(frozen=True, slots=True)
class UtilizationClass:
    """One class: its pattern and the average / peak utilization it is tagged with (§4.1)."""

    class_id: str
    pattern: Pattern
    average: float
    peak: float
    tenants: int
    weight: float


@dataclass(frozen=True, slots=True)
class TenantAssignment:
    """One tenant's profile and class: what `harvester tenants` prints."""

    tenant: str
    class_id: str
    pattern: Pattern
    average: float
    peak: float
    periodic_share: float
    std: float
    samples: int
    fallback: str = ""


@dataclass(frozen=True)
class TenantClassModel:
    """The fitted classes and the tenant → class map. Frozen; look up with `predict`."""

    version: int
    fitted_at: float
    classes: tuple[UtilizationClass, ...]
    tenants: tuple[TenantAssignment, ...]
    params: ClassParams = field(default_factory=ClassParams)
    skipped: tuple[tuple[str, str], ...] = ()
    _by_tenant: dict[str, TenantAssignment] = field(init=False, repr=False, compare=False)
    _by_class: dict[str, UtilizationClass] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_tenant", {a.tenant: a for a in self.tenants})
        object.__setattr__(self, "_by_class", {c.class_id: c for c in self.classes})
        unknown = {a.class_id for a in self.tenants} - set(self._by_class)
        if unknown:
            raise ValueError(f"tenants assigned to unknown classes: {sorted(unknown)}")

    def assignment(self, tenant: str) -> TenantAssignment | None:
        return self._by_tenant.get(tenant)

    def class_by_id(self, class_id: str) -> UtilizationClass | None:
        return self._by_class.get(class_id)

    def members(self, class_id: str) -> tuple[str, ...]:
        return tuple(a.tenant for a in self.tenants if a.class_id == class_id)

    def tenant_class_map(self) -> dict[str, str]:
        return {a.tenant: a.class_id for a in self.tenants}


def predict(model: TenantClassModel, tenant: str) -> UtilizationClass | None:
    """The class of a tenant seen at fit time, or None (an unknown tenant has no class yet)."""
    a = model.assignment(tenant)
    return None if a is None else model.class_by_id(a.class_id)


def fit(
    series: TenantSeries | Mapping[str, np.ndarray],
    *,
    version: int,
    fitted_at: float,
    params: ClassParams = ClassParams(),
    tenant_weights: Mapping[str, float] | None = None,
) -> TenantClassModel:
    """Patterns by FFT (models/patterns.py), then k-means per pattern on (average, peak).

    `series` is a `TenantSeries` or a mapping tenant → 1-D series at `params.patterns.step_s`
    (aligned on the last sample). `tenant_weights` (e.g. node counts) weight the class tags;
    missing tenants weigh 1.
    """
    ts = series if isinstance(series, TenantSeries) else stack_series(series, step_s=params.patterns.step_s)
    if ts.step_s != params.patterns.step_s:
        raise ValueError(f"series step {ts.step_s}s differs from the pattern step {params.patterns.step_s}s")
    prof = profile_patterns(ts.matrix, params.patterns)
    weights = np.array([float((tenant_weights or {}).get(t, 1.0)) for t in ts.tenants])
    skipped = tuple((ts.tenants[i], prof.fallback_of(i)) for i in np.flatnonzero(prof.valid == 0))
    classes: list[UtilizationClass] = []
    assignments: list[TenantAssignment] = []
    for code, pattern in enumerate(PATTERNS):
        idx = np.flatnonzero((prof.pattern == code) & (prof.valid > 0))
        if idx.size == 0:
            continue
        feats = np.column_stack([prof.average[idx], prof.peak[idx]])
        labels = _cluster(feats, params)
        w = weights[idx]
        stats = []
        for lab in np.unique(labels):
            members = labels == lab
            ww = w[members] if w[members].sum() > 0 else np.ones(int(members.sum()))
            stats.append((float(np.average(feats[members, 0], weights=ww)),
                          float(np.average(feats[members, 1], weights=ww)), lab, int(members.sum()), float(w[members].sum())))
        stats.sort(key=lambda s: (s[0], s[1]))
        label_to_id = {}
        for i, (avg, pk, lab, count, weight) in enumerate(stats):
            cid = f"{pattern.value}-{i}"
            label_to_id[lab] = cid
            classes.append(UtilizationClass(cid, pattern, avg, pk, count, weight))
        for j, row in enumerate(idx):
            assignments.append(
                TenantAssignment(
                    tenant=ts.tenants[row], class_id=label_to_id[labels[j]], pattern=pattern,
                    average=float(prof.average[row]), peak=float(prof.peak[row]),
                    periodic_share=float(prof.periodic_share[row]), std=float(prof.std[row]),
                    samples=int(prof.valid[row]), fallback=prof.fallback_of(row),
                )
            )
    assignments.sort(key=lambda a: a.tenant)
    return TenantClassModel(version, fitted_at, tuple(classes), tuple(assignments), params, skipped)


def _cluster(feats: np.ndarray, params: ClassParams) -> np.ndarray:
    """k-means labels for one pattern's (average, peak) rows; k by silhouette (module doc)."""
    # scikit-learn takes ~2 s to import: only a refit pays it, not every CLI call
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import silhouette_score

    n = feats.shape[0]
    distinct = np.unique(np.round(feats, 6), axis=0).shape[0]
    k_max = min(params.max_k, distinct, n - 1)
    if k_max < 2:
        return np.zeros(n, dtype=np.intp)
    best_score, best_labels = -np.inf, np.zeros(n, dtype=np.intp)
    sample = min(params.silhouette_sample, n)
    for k in range(2, k_max + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = KMeans(n_clusters=k, n_init=params.n_init, random_state=params.seed).fit_predict(feats)
        if np.unique(labels).size < 2:
            continue
        try:
            score = float(silhouette_score(feats, labels, sample_size=sample, random_state=params.seed))
        except ValueError:  # the sample drew a single label: this k cannot be scored
            continue
        if score > best_score + 1e-9:
            best_score, best_labels = score, labels
    return best_labels
