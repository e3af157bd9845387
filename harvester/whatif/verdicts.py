"""One verdict per technique, from the measured figures only (pure; rules stated in docs/whatif.md).

A technique is compared with the baseline it changes (the evaluation's ablations,
docs/evaluation/harvesting.md): the guard (yarn-pt) with stock YARN, Algorithm 1 (yarn-h) with
yarn-pt (same guard, only placement differs, OSDI'16 §4.1), the reaction-time reserve with the
fixed reserve, Morpheus with the jobs' static allocations (§9.1), HDFS-H with stock placement
(OSDI'16 §4.2). The rule, the same for every technique:

- **turn it on** when it improves the technique's own goal by more than `MATERIAL` (5 %) and
  worsens none of the guarded figures by more than `MATERIAL`;
- **leave it off** when it worsens a guarded figure by more than `MATERIAL`, or changes its own
  goal by less than `MATERIAL` (no material gain here: a technique with no gain is not worth its
  moving parts);
- a change is measured relative to the baseline's figure; when both are below the `FLOOR` of
  that figure (0.5 core-hours, one kill, one SLO miss...), they count as equal.

Goals and guarded figures (lower is better for every one):
| technique | goal | guarded |
|---|---|---|
| guard (yarn-pt vs stock) | unmet primary core-hours | — (it takes batch capacity by design: job time and harvest are reported) |
| Algorithm 1 (yarn-h vs yarn-pt) | mean job time | unmet primary, task kills |
| reaction reserve (yarn-pt vs fixed-reserve) | wasted core-hours | unmet primary |
| Morpheus (vs static p95) | SLO misses | footprint |
| HDFS-H (grid vs stock) | blocks lost | blocks ever unavailable |
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

MATERIAL = 0.05
FLOORS = {"unmet_primary_core_hours": 0.5, "job_time_mean_s": 1.0, "task_kills": 1.0, "wasted_core_hours": 0.5,
          "slo_misses": 1.0, "footprint": 1.0, "blocks_lost": 1.0, "blocks_ever_unavailable": 1.0}
LABELS = {"unmet_primary_core_hours": "unmet primary demand", "job_time_mean_s": "mean job time",
          "task_kills": "task kills", "wasted_core_hours": "wasted work", "slo_misses": "SLO misses",
          "footprint": "footprint", "blocks_lost": "blocks lost", "blocks_ever_unavailable": "blocks ever unavailable"}


@dataclass(frozen=True)
class Technique:
    name: str
    candidate: str
    baseline: str
    goal: str
    guarded: tuple[str, ...]


TECHNIQUES = (
    Technique("the guard", "yarn-pt", "stock", "unmet_primary_core_hours", ()),
    Technique("Algorithm 1", "yarn-h", "yarn-pt", "job_time_mean_s", ("unmet_primary_core_hours", "task_kills")),
    Technique("the reaction-time reserve", "yarn-pt", "fixed-reserve", "wasted_core_hours", ("unmet_primary_core_hours",)),
    Technique("Morpheus", "morpheus", "static", "slo_misses", ("footprint",)),
    Technique("HDFS-H", "hdfs-h", "hdfs-stock", "blocks_lost", ("blocks_ever_unavailable",)),
)


def change(new: float, old: float, key: str) -> float:
    """Relative change new vs old (0 when both are under the key's floor; ±inf from a zero base)."""
    floor = FLOORS.get(key, 0.0)
    if abs(new) < floor and abs(old) < floor:
        return 0.0
    if old == 0:
        return math.inf if new > 0 else 0.0
    return new / old - 1.0


@dataclass(frozen=True)
class Verdict:
    technique: str
    candidate: str
    baseline: str
    decision: str            # "turn it on" | "leave it off" | "not measured"
    goal_change: float | None
    line: str
    changes: Mapping[str, float]


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:,.1f}" if abs(x) < 1000 else f"{x:,.0f}"


def _pct(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:+.1%}"


def verdict(t: Technique, figures: Mapping[str, Mapping[str, float | None]]) -> Verdict:
    """The verdict for `t` from per-policy figures (module docstring's rule)."""
    a, b = figures.get(t.candidate), figures.get(t.baseline)
    if a is None or b is None or a.get(t.goal) is None or b.get(t.goal) is None:
        return Verdict(t.name, t.candidate, t.baseline, "not measured", None,
                       f"{t.name}: not measured here ({t.candidate} and {t.baseline} are both needed)", {})
    ch = {k: change(float(a[k]), float(b[k]), k) for k in (t.goal, *t.guarded)
          if a.get(k) is not None and b.get(k) is not None}
    goal = ch[t.goal]
    worse = [k for k in t.guarded if ch.get(k, 0.0) > MATERIAL]
    what = (f"here {t.name} would change {LABELS[t.goal]} by {_pct(goal)} against {t.baseline} "
            f"({_num(b[t.goal])} → {_num(a[t.goal])})")
    if worse:
        why = ", ".join(f"{LABELS[k]} {_pct(ch[k])}" for k in worse)
        return Verdict(t.name, t.candidate, t.baseline, "leave it off", goal, f"{what}, but {why}: leave it off", ch)
    if goal < -MATERIAL:
        return Verdict(t.name, t.candidate, t.baseline, "turn it on", goal, f"{what}: turn it on", ch)
    why = "worse" if goal > MATERIAL else f"less than {MATERIAL:.0%} better"
    return Verdict(t.name, t.candidate, t.baseline, "leave it off", goal, f"{what}, {why}: leave it off", ch)


def verdicts(figures: Mapping[str, Mapping[str, float | None]]) -> list[Verdict]:
    return [verdict(t, figures) for t in TECHNIQUES]


def recommend_quantile(runs: Mapping[float, Mapping[str, float]], current: float) -> tuple[float, str]:
    """The reserve quantile to recommend from guard-only runs at several quantiles: the one that
    harvests the most core-hours without more unmet primary demand than the current setting
    (beyond the figure's floor). Returns (quantile, the rule's reason)."""
    if current not in runs:
        raise ValueError(f"no run at the current quantile {current}")
    limit = runs[current]["unmet_primary_core_hours"]
    ok = {q: r for q, r in runs.items()
          if change(r["unmet_primary_core_hours"], limit, "unmet_primary_core_hours") <= 0.0}
    best = max(ok, key=lambda q: (ok[q]["harvested_core_hours"], q == current))
    gain = ok[best]["harvested_core_hours"] - runs[current]["harvested_core_hours"]
    tried = ", ".join(f"{q:g}" for q in sorted(runs))
    if best == current:
        return best, (f"the current quantile {current:g} harvests the most among {tried} without more unmet "
                      "primary demand")
    return best, (f"quantile {best:g} harvests {gain:+,.1f} core-hours against the current {current:g} with no more "
                  f"unmet primary demand (tried {tried})")


LADDER = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)


def candidate_quantiles(current: float) -> tuple[float, ...]:
    """The current quantile and its neighbours on LADDER (one below, one above)."""
    below = [q for q in LADDER if q < current - 1e-12]
    above = [q for q in LADDER if q > current + 1e-12]
    return tuple(sorted({current, *(below[-1:]), *(above[:1])}))
