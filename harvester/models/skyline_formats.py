"""Hadoop Resource Estimator formats (hadoop-tools/hadoop-resourceestimator, release 3.3.6) — pure text.

Input: the Estimator's native log (`NativeSingleLineParser`, golden sample `lp/tpch_q12.txt`),
one run per line, fields split on whitespace:

    pipelineId  numInstances  submit  start  end  runId  memUsage  coreUsage
    etl_daily   60  1795140000000  1795140004000  1795143604000  etl_daily_run1  1024:1|  2:0|6:5|...|

`coreUsage` is a list of units `n:t|` = n containers during [t, t + timeInterval) (seconds; the
Estimator's default `resourceestimator.timeInterval` is 5). The Estimator ignores fields 1-4 and
`memUsage`, assumes every container is <1024 MB, 1 vcore>, sums units that overlap, sums the
lines of the same (pipelineId, runId), and uses per interval the MAXIMUM in use at any second of
it (`SolverPreprocessor.getDiscreteSkyline`). `parse_native_log` does the same by default;
with `memory_field=True` it reads `memUsage` (units `MB:t|`, as in tpch_q12.txt) as the memory
series and `coreUsage` as vcores, instead of the 1 GB / 1 vcore assumption. Each run is aligned
at its first unit (the Estimator indexes from t = 0, which is where every sample starts).
Lines it would fail on (fewer than 8 fields, a unit that is not `int:int`) are reported with
their line number and skipped; nothing else is dropped. A run's units become the Estimator's
`RLESparseResourceAllocation` first (`rle_from_units`: a key where the sum changes, units of 0
add nothing, the last key is the end with 0), then its steps (`rle_steps`), so a run starts at
its first unit that holds something, as the Estimator's `getEarliestStartTime`.

Output: the Estimator's skyline JSON (`GET /resourceestimator/estimator/{pipelineId}`, captured
in the fixtures' resourceestimator-3.3.6/captures/estimator-etl_daily.json):
`{"resourceAllocation": {"<t>": {"memory": MB, "vcores": n}, ...}}`, run-length encoded (a key
where the value changes; the last key is the end, with 0/0), t in seconds from the start.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from harvester.domain import Resources
from harvester.models.skyline import RunSkyline

ESTIMATOR_TIME_INTERVAL_S = 5
ESTIMATOR_CONTAINER = (1024, 1)  # the native parser's assumed container <memory MB, vcores>


class EstimatorFormatError(ValueError):
    """A document is not in the Resource Estimator's shape."""


@dataclass(frozen=True)
class NativeRun:
    pipeline_id: str
    run_id: str
    skyline: RunSkyline


@dataclass(frozen=True)
class NativeLog:
    runs: tuple[NativeRun, ...]
    problems: tuple[tuple[int, str], ...]  # (line number, why it was skipped)

    def pipeline(self, pipeline_id: str) -> list[RunSkyline]:
        return [r.skyline for r in self.runs if r.pipeline_id == pipeline_id]


#: An `RLESparseResourceAllocation`: (time, value) where the value changes, ascending; the last
#: key is the end (value 0); empty when nothing was ever in use.
Rle = tuple[tuple[int, int], ...]


def units_of(field: str) -> list[tuple[int, int]]:
    """(time, value) of a `value:time|value:time|...` field; ValueError names a bad unit."""
    out = []
    for unit in field.split("|"):
        if not unit:
            continue
        value, sep, t = unit.partition(":")
        try:
            if not sep:
                raise ValueError
            pair = (int(t), int(value))
        except ValueError:
            raise ValueError(f"unit {unit[:40]!r} is not value:time (two integers)") from None
        if pair[1] < 0:
            raise ValueError(f"unit {unit[:40]!r} holds a negative value")
        out.append(pair)
    return out


def rle_from_units(units: Iterable[tuple[int, int]], interval: int) -> Rle:
    """The Estimator's `addInterval(t, t + interval, value)` for every unit: overlapping units add
    up, a unit of 0 adds nothing, a key only where the sum changes."""
    deltas: dict[int, int] = defaultdict(int)
    for t, v in units:
        if v:
            deltas[t] += v
            deltas[t + interval] -= v
    return _rle_of_deltas(deltas)


def rle_sum(parts: Sequence[Rle]) -> Rle:
    """Several allocations added up (the Estimator merges the skylines of one run this way)."""
    deltas: dict[int, int] = defaultdict(int)
    for rle in parts:
        prev = 0
        for t, v in rle:
            deltas[t] += v - prev
            prev = v
    return _rle_of_deltas(deltas)


def _rle_of_deltas(deltas: Mapping[int, int]) -> Rle:
    """The step function whose value changes by deltas[t] at t (starting at 0), as an RLE."""
    out: list[tuple[int, int]] = []
    level = 0
    for t in sorted(deltas):
        level += deltas[t]
        if (out and out[-1][1] == level) or (not out and level == 0):
            continue
        out.append((t, level))
    return tuple(out)


def rle_steps(rle: Rle, interval: int) -> np.ndarray:
    """Per `interval` from the first key, the largest value at any time of it (the Estimator's
    `SolverPreprocessor.getDiscreteSkyline`); ceil(span / interval) steps. O(keys + steps)."""
    if not rle:
        return np.zeros(0)
    t = np.array([k for k, _ in rle], dtype=np.int64)
    v = np.array([x for _, x in rle], dtype=float)
    rel = t - t[0]
    lo, hi = rel[:-1] // interval, (rel[1:] - 1) // interval  # steps touched by segment j
    lengths = hi - lo + 1
    first = np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
    steps = first + np.arange(int(lengths.sum()))
    out = np.zeros(int(-(-int(rel[-1]) // interval)))
    np.maximum.at(out, steps, np.repeat(v[:-1], lengths))
    return out


def rle_of_steps(values: Sequence[Any], step: float) -> list[tuple[float, Any]]:
    """The Estimator's encoding of per-step values (numbers or tuples): (k·step, value) where the
    value changes, nothing before the first step that holds something, and after the last one
    the end, with zero."""
    held = [k for k, v in enumerate(values) if np.any(np.asarray(v) != 0)]
    if not held:
        return []
    first, last = held[0], held[-1]
    out: list[tuple[float, Any]] = []
    for k in range(first, last + 1):
        if not out or out[-1][1] != values[k]:
            out.append((k * step, values[k]))
    zero = tuple(0 for _ in values[first]) if isinstance(values[first], tuple) else 0
    out.append(((last + 1) * step, zero))
    return out


def _discrete(units: list[tuple[int, int]], interval: int) -> np.ndarray:
    """Per interval, the maximum over its seconds of the summed overlapping units."""
    return rle_steps(rle_from_units(units, interval), interval)


def parse_native_log(lines: Iterable[str], *, time_interval: int = ESTIMATOR_TIME_INTERVAL_S,
                     container: tuple[int, int] = ESTIMATOR_CONTAINER, memory_field: bool = False) -> NativeLog:
    """Runs of the native log (module doc); `container` = <MB, vcores> of one container."""
    if time_interval <= 0:
        raise ValueError("time_interval must be > 0")
    merged: dict[tuple[str, str], list[list[tuple[int, int]]]] = {}
    problems: list[tuple[int, str]] = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        f = line.split()
        if len(f) < 8:
            problems.append((no, f"{len(f)} fields, need 8 (pipelineId ... runId memUsage coreUsage)"))
            continue
        try:
            cores = units_of(f[7])
            mem = units_of(f[6]) if memory_field else []
        except ValueError as exc:
            problems.append((no, str(exc)))
            continue
        parts = merged.setdefault((f[0], f[5]), [[], []])
        parts[0].extend(cores)
        parts[1].extend(mem)
    runs = []
    for (pipeline, run), (cores, mem) in merged.items():
        c = _discrete(cores, time_interval)
        if memory_field:
            m = _discrete(mem, time_interval)
            k = max(c.size, m.size)
            vc, mb = np.pad(c, (0, k - c.size)), np.pad(m, (0, k - m.size))
        else:
            vc, mb = c * container[1], c * container[0]
        box = None if memory_field else Resources(container[0], container[1])
        runs.append(NativeRun(pipeline, run, RunSkyline(run, float(time_interval), mb, vc, box)))
    return NativeLog(tuple(runs), tuple(problems))


def _time_key(t: float) -> str:
    return str(int(t)) if float(t).is_integer() else repr(float(t))


def to_estimator_json(memory_mb: np.ndarray, vcores: np.ndarray, step_s: float) -> dict[str, Any]:
    """`{"resourceAllocation": {...}}` as the Estimator answers (`rle_of_steps`: end marker 0/0,
    nothing before the first or after the last step that holds something)."""
    mem = np.asarray(memory_mb, dtype=np.int64)
    vc = np.asarray(vcores, dtype=np.int64)
    if mem.shape != vc.shape or mem.ndim != 1:
        raise ValueError("memory and vcores must be 1-D of equal length")
    keys = rle_of_steps(list(zip(mem.tolist(), vc.tolist())), step_s)
    return {"resourceAllocation": {_time_key(t): {"memory": m, "vcores": v} for t, (m, v) in keys}}


def from_estimator_json(doc: Mapping[str, Any], step_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-step (memory MB, vcores) of a `{"resourceAllocation": ...}` document on a `step_s` grid."""
    alloc = doc.get("resourceAllocation") if isinstance(doc, Mapping) else None
    if not isinstance(alloc, Mapping):
        raise EstimatorFormatError("expected an object with a 'resourceAllocation' object")
    try:
        points = sorted((float(t), int(v["memory"]), int(v["vcores"])) for t, v in alloc.items())
    except (KeyError, TypeError, ValueError) as exc:
        raise EstimatorFormatError(f"bad resourceAllocation entry: {exc}") from exc
    if not points:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    steps = int(round(points[-1][0] / step_s))
    mem = np.zeros(steps, dtype=np.int64)
    vc = np.zeros(steps, dtype=np.int64)
    for (t, m, v), nxt in zip(points, points[1:] + [(points[-1][0], 0, 0)]):
        a, b = int(round(t / step_s)), int(round(nxt[0] / step_s))
        mem[a:b], vc[a:b] = m, v
    return mem, vc
