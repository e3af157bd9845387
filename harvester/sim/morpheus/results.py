"""Reading the Morpheus evaluation's results document (report.py writes it, figure.py draws it)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from harvester.sim.morpheus.evaluate import SWEPT

RESERVED_LATE = "reserved throughout, finished after d_j"


def label(policy: str, alpha: float | None) -> str:
    return policy if alpha is None else f"{policy}[α={alpha:g}]"


def rows_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(zip(doc["rows"]["columns"], r)) for r in doc["rows"]["data"]]


def main_alpha(doc: dict[str, Any]) -> float:
    alphas = doc["setup"]["alphas"]
    return 0.01 if 0.01 in alphas else alphas[0]


def sweep_summary(sweep: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (policy, capacity factor): misses, footprint (Σ peaks) vs the p95 baseline's, runs
    served static."""
    acc: dict[tuple[str, float], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for x in sweep:
        a = acc[(x["policy"], x["capacity_factor"])]
        a["runs"] += x["runs"]
        a["missed"] += len(x["missed"])
        a["static_runs"] += x["static_runs"]
        a["unreserved"] += x["unreserved"]
        a["peak_vcores"] += x["peak_vcores"]
        a["p95_peak_vcores"] += x["p95_peak_vcores"]
    return [{"policy": p, "capacity_factor": f, **{k: v for k, v in a.items()},
             "footprint_vs_p95": a["peak_vcores"] / a["p95_peak_vcores"] if a["p95_peak_vcores"] else None}
            for (p, f), a in sorted(acc.items(), key=lambda kv: (SWEPT.index(kv[0][0]), kv[0][1]))]
