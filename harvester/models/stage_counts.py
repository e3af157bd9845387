"""A running YARN job's tasks per stage, from what the RM shows (the input of Jockey's progress
indicator, EuroSys'12 §4.2, live) — pure.

The RM does not know a job's stages; its ApplicationMaster does. What the RM REST API shows
per app (captures apps-id-appattempts-id-containers-16-running, scenarios/recurring-reservation*):
- the live containers of the current attempt, each with the PRIORITY its AM asked at;
- the AM's outstanding asks (`resourceRequests`, the `*` entries) per priority.
A MapReduce AM asks maps at priority 20 (opportunistic maps 19, re-runs of failed maps 5) and
reduces at 10; its own container has priority 0 (RMContainerAllocator). So priorities name
stages (`MAPREDUCE_PRIORITIES`); other frameworks give theirs in config.

Per stage s with n_s tasks, r_s running (live non-AM containers at its priorities) and q_s
pending (outstanding asks at its priorities):

    done_s = clip(n_s − r_s − q_s, 0, n_s)  once s has STARTED, else 0

- started: s, or a stage that reads from it, has been seen (a container or an ask) in this or
  an earlier poll of this app: before the AM's first ask nothing is running or pending, and
  n − 0 − 0 would call the stage done;
- a stage behind a BARRIER parent that is not done has done 0: MapReduce asks for reduces early
  (slow start at 5 % of the maps) and ramps them up as its headroom allows, so the AM holds back
  reduces the RM never sees and n − r − q over-counts them; but no reduce can finish before
  every map has (it needs all their outputs), and once no map is left to schedule the AM asks
  for every remaining reduce (scheduleAllReduces), so from then on the count is exact;
- a ONE_TO_ONE child has done at most its parent's done;
- a failed attempt goes back to pending (MapReduce re-asks it): done does not move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from harvester.models.job_model import Edge, JobModel

#: MapReduce's container priorities per stage (RMContainerAllocator: PRIORITY_MAP 20,
#: PRIORITY_OPPORTUNISTIC_MAP 19, PRIORITY_FAST_FAIL_MAP 5, PRIORITY_REDUCE 10).
MAPREDUCE_PRIORITIES: Mapping[str, tuple[int, ...]] = {"map": (20, 19, 5), "reduce": (10,)}
ANY_WORKER = -1  # a one-stage job: every non-AM container and ask is its


def stage_priorities(model: JobModel, configured: Mapping[str, Sequence[int]] | None) -> dict[str, tuple[int, ...]]:
    """Each stage's priorities: `configured`, else MapReduce's for stages named map / reduce,
    else (one stage) every worker. ValueError names what is missing."""
    names = [s.name for s in model.stages]
    if configured:
        missing = [n for n in names if n not in configured]
        if missing:
            raise ValueError(f"stage_priorities has no entry for stage(s) {missing} of {model.name or 'the job'}")
        out = {n: tuple(int(p) for p in configured[n]) for n in names}
    elif set(names) <= set(MAPREDUCE_PRIORITIES):
        out = {n: MAPREDUCE_PRIORITIES[n] for n in names}
    elif len(names) == 1:
        return {names[0]: (ANY_WORKER,)}
    else:
        raise ValueError(f"stages {names} are not MapReduce's map/reduce: give stage_priorities")
    seen: dict[int, str] = {}
    for n, ps in out.items():
        for p in ps:
            if p in seen:
                raise ValueError(f"priority {p} is given to stages {seen[p]} and {n}")
            seen[p] = n
    return out


@dataclass(frozen=True, slots=True)
class StageCounts:
    """Tasks per stage (model order): done, running, pending, and which stages have started."""

    done: np.ndarray
    running: np.ndarray
    pending: np.ndarray
    started: tuple[bool, ...]


def _per_stage(by_priority: Mapping[int, int], priorities: Sequence[tuple[int, ...]]) -> np.ndarray:
    out = np.zeros(len(priorities), dtype=np.int64)
    for i, ps in enumerate(priorities):
        out[i] = sum(by_priority.values()) if ps == (ANY_WORKER,) else sum(by_priority.get(p, 0) for p in ps)
    return out


def stage_counts(model: JobModel, priorities: Mapping[str, tuple[int, ...]], running: Mapping[int, int],
                 pending: Mapping[int, int], seen_before: Sequence[bool] = ()) -> StageCounts:
    """Per-stage counts from running containers and pending asks per priority (AM excluded by the
    caller); `seen_before`: the `started` of this app's previous poll (module docstring)."""
    stages = model.stages
    order = [priorities[s.name] for s in stages]
    r, q = _per_stage(running, order), _per_stage(pending, order)
    seen = [bool(r[i] or q[i]) or (i < len(seen_before) and seen_before[i]) for i in range(len(stages))]
    for i in reversed(range(len(stages))):  # a stage that reads from s means s has started
        if seen[i]:
            for p in stages[i].parents:
                seen[p] = True
    n = np.array([s.tasks for s in stages], dtype=np.int64)
    done = np.zeros(len(stages), dtype=np.int64)
    for i, s in enumerate(stages):  # model order is topological
        if not seen[i]:
            continue
        d = int(np.clip(n[i] - r[i] - q[i], 0, n[i]))
        for p, edge in zip(s.parents, s.edges):
            if edge is Edge.BARRIER and done[p] < n[p]:
                d = 0
            elif edge is Edge.ONE_TO_ONE:
                d = min(d, int(done[p]))
        done[i] = d
    return StageCounts(done, r, q, tuple(seen))
