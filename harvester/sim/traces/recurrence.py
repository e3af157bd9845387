"""Does a loader's recurring identity (identity.py) group real repeated runs? The measurement
behind each loader's docstring: `python -m harvester.sim.traces.recurrence FORMAT PATH
[--option KEY=VALUE ...] [--stages LO-HI]`.

Runs are grouped by `JobSpec.name` and ordered by submit time. Printed:
- recurrence (identity.py `Recurrence`): names, names with >= 2 runs, shares of runs;
- same length class: consecutive runs of a name fall in the same third of all jobs' lengths
  (`JobSpec.critical_path_s`): "the job's type from its last run" (OSDI'16 Algorithm 1 line 3)
  is informative only if this beats chance (the sum of the thirds' squared shares, ~1/3);
- periodic gaps: of the gaps between consecutive runs of a name >= 12 h, the share within 1 h
  of whole days (chance 2/24); of those >= 30 min, within 5 min of whole hours (chance 10/60).
  A trace whose time axis is stitched (SWIM's sampled hours) says nothing here.
`--stages LO-HI` keeps only jobs with that many stages (to measure a size band on its own).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from harvester.sim.traces.common import TraceError
from harvester.sim.traces.identity import Recurrence, recurrence
from harvester.sim.traces.jobs import load_jobs
from harvester.sim.workload import JobSpec

HOUR_S, DAY_S = 3600.0, 86400.0


@dataclass(frozen=True)
class Evidence:
    recurrence: Recurrence
    pairs: int                   # consecutive runs of one name
    same_third: float            # share of pairs in the same third of job lengths
    same_third_chance: float
    day_gaps: int                # pairs >= 12 h apart ...
    whole_days: float            # ... within 1 h of whole days apart
    hour_gaps: int               # pairs >= 30 min apart ...
    whole_hours: float           # ... within 5 min of whole hours apart


def _near_multiple(gaps: np.ndarray, unit: float, tol: float) -> float:
    off = np.abs((gaps + unit / 2) % unit - unit / 2)
    return float(np.mean(off <= tol)) if gaps.size else float("nan")


def evidence(jobs: Sequence[JobSpec]) -> Evidence:
    lengths = np.array([j.critical_path_s() for j in jobs])
    cuts = np.quantile(lengths, [1 / 3, 2 / 3]) if len(jobs) else np.zeros(2)
    third = {j.job_id: int(np.searchsorted(cuts, x, side="right")) for j, x in zip(jobs, lengths)}
    shares = np.bincount(list(third.values()), minlength=3) / max(1, len(jobs))
    runs: dict[str, list[JobSpec]] = defaultdict(list)
    for j in sorted(jobs, key=lambda j: j.submit_s):
        runs[j.name].append(j)
    same, gaps = [], []
    for group in runs.values():
        for a, b in zip(group, group[1:]):
            same.append(third[a.job_id] == third[b.job_id])
            gaps.append(b.submit_s - a.submit_s)
    g = np.asarray(gaps, dtype=np.float64)
    days, hours = g[g >= DAY_S / 2], g[g >= HOUR_S / 2]
    return Evidence(recurrence(j.name for j in jobs), len(same), float(np.mean(same)) if same else float("nan"),
                    float(np.sum(shares ** 2)), int(days.size), _near_multiple(days, DAY_S, HOUR_S),
                    int(hours.size), _near_multiple(hours, HOUR_S, 300.0))


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.0%}"


def describe(e: Evidence) -> str:
    r = e.recurrence
    return "\n".join([
        f"runs {r.runs:,}, names {r.names:,}, recurring names {r.recurring_names:,} ({r.recurring_runs:,} runs)",
        r.describe(),
        f"consecutive runs of a name: {e.pairs:,}; same third of job lengths {_pct(e.same_third)} "
        f"(chance {e.same_third_chance:.0%})",
        f"gaps >= 12 h within 1 h of whole days: {_pct(e.whole_days)} of {e.day_gaps:,} (chance 8%)",
        f"gaps >= 30 min within 5 min of whole hours: {_pct(e.whole_hours)} of {e.hour_gaps:,} (chance 17%)",
    ])


def _value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harvester.sim.traces.recurrence", description=__doc__.split("\n\n")[0])
    p.add_argument("format", help="job format (harvester.sim.traces.JOB_FORMATS)")
    p.add_argument("path", help="trace file")
    p.add_argument("--limit", type=int, default=None, help="rows read at most")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="loader option (JSON value)")
    p.add_argument("--stages", default=None, metavar="LO-HI", help="only jobs with LO..HI stages")
    a = p.parse_args(argv)
    options = {k: _value(v) for k, _, v in (o.partition("=") for o in a.option)}
    try:
        jobs = load_jobs(a.format, a.path, a.limit, **options)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.stages:
        lo, _, hi = a.stages.partition("-")
        jobs = [j for j in jobs if int(lo) <= len(j.stages) <= (int(hi) if hi else len(j.stages))]
    print(describe(evidence(jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
