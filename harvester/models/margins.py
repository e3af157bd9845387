"""Reserve margins from the distribution of utilization change (Zhu et al., paper 004 §4) — pure.

Paper 004 §4.1–4.2, measure 1: "The limited fluctuation of utilization in consecutive moments
makes possible setting a narrow margin for resource reservation ... More than 90% of times
have changes less than 20% between consecutive sampling periods ... This margin can be raised
according to the utilization change distributions, if tighter SLA is required."

The OSDI'16 guard keeps a reserve that "a spiking primary tenant can immediately consume ...
until our software can react" (§2). The margin of a class is therefore the `quantile`
(default 0.95) of |u[t+1] − u[t]| over every consecutive pair of valid samples of every tenant
in the class: with that reserve, the primary's next move is covered at least `quantile` of the
time before the guard reacts.

Choices (the paper leaves them open):
- Absolute change in utilization (fraction of the server's physical cores), not relative to
  the previous value: the reserve is needed in cores, and a relative change is undefined or
  explosive when the primary is near idle.
- Pairs with a missing sample on either side are skipped (a gap is not a change).
- The step is the history's (2 min). The guard reacts within a control period plus the RM's
  2–7 s telemetry delay (fixtures scenarios/cpu-burn), well under 2 min, so the 2-minute change
  distribution is an upper bound for what must be absorbed before a reaction (measure 2:
  finer sampling would allow narrower margins).
- Per class, pooled over its tenants, so a class with a single noisy tenant is not averaged
  away by the rest of the cluster.

Floors, caps and the cold-start value for classes with too little data are POLICY and live in
decisions/reserve.py (DESIGN.md principle 9).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from harvester.models.tenant_series import TenantSeries


@dataclass(frozen=True, slots=True)
class ClassMargin:
    """The fitted margin of one class: the `quantile` of what it measures over `changes`
    observations (|Δu| between slots here; rises within the reaction horizon in
    models/reaction_margins.py, where `source` says whether from raw samples or the coarse rule)."""

    class_id: str
    quantile: float
    margin: float
    changes: int
    mean_change: float
    source: str = "slots"


@dataclass(frozen=True)
class MarginModel:
    """Margins per class, fitted with one quantile over series at `step_s`."""

    version: int
    fitted_at: float
    quantile: float
    step_s: float
    margins: tuple[ClassMargin, ...]
    method: str = "change"               # change (this module), reaction (reaction_margins.py), fixed
    horizon_s: float | None = None       # the reaction horizon H the margins cover (method reaction)
    _by_class: dict[str, ClassMargin] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_class", {m.class_id: m for m in self.margins})

    def margin(self, class_id: str) -> ClassMargin | None:
        return self._by_class.get(class_id)


def fit_margins(
    series: TenantSeries,
    tenant_class: Mapping[str, str],
    *,
    quantile: float = 0.95,
    version: int = 0,
    fitted_at: float = 0.0,
) -> MarginModel:
    """Margin per class = `quantile` of absolute consecutive utilization changes (module doc)."""
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    rows_by_class: dict[str, list[int]] = {}
    for i, tenant in enumerate(series.tenants):
        cid = tenant_class.get(tenant)
        if cid is not None:
            rows_by_class.setdefault(cid, []).append(i)
    margins = []
    for cid in sorted(rows_by_class):
        block = series.matrix[rows_by_class[cid]]
        changes = np.abs(np.diff(block, axis=1)).ravel()
        changes = changes[~np.isnan(changes)]
        if changes.size == 0:
            margins.append(ClassMargin(cid, quantile, float("nan"), 0, float("nan")))
            continue
        margins.append(
            ClassMargin(cid, quantile, float(np.quantile(changes, quantile)), int(changes.size), float(changes.mean()))
        )
    return MarginModel(version, fitted_at, quantile, series.step_s, tuple(margins))
