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
their line number and skipped; nothing else is dropped.

Output: the Estimator's skyline JSON (`GET /resourceestimator/estimator/{pipelineId}`, captured
in the fixtures' resourceestimator-3.3.6/captures/estimator-etl_daily.json):
`{"resourceAllocation": {"<t>": {"memory": MB, "vcores": n}, ...}}`, run-length encoded (a key
where the value changes; the last key is the end, with 0/0), t in seconds from the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

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


def _units(field: str) -> list[tuple[int, int]]:
    out = []
    for unit in field.split("|"):
        if not unit:
            continue
        value, sep, t = unit.partition(":")
        if not sep:
            raise ValueError(f"unit {unit!r} is not value:time")
        out.append((int(t), int(value)))
    return out


def _discrete(units: list[tuple[int, int]], interval: int) -> np.ndarray:
    """Per interval, the maximum over its seconds of the summed overlapping units."""
    if not units:
        return np.zeros(0)
    t0 = min(t for t, _ in units)
    span = max(t for t, _ in units) + interval - t0
    level = np.zeros(span + 1)
    for t, v in units:
        level[t - t0] += v
        level[t - t0 + interval] -= v
    per_second = np.cumsum(level)[:span]
    steps = -(-span // interval)
    padded = np.zeros(steps * interval)
    padded[:span] = per_second
    return padded.reshape(steps, interval).max(axis=1)


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
            cores = _units(f[7])
            mem = _units(f[6]) if memory_field else []
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
        runs.append(NativeRun(pipeline, run, RunSkyline(run, float(time_interval), mb, vc)))
    return NativeLog(tuple(runs), tuple(problems))


def _time_key(t: float) -> str:
    return str(int(t)) if float(t).is_integer() else repr(float(t))


def to_estimator_json(memory_mb: np.ndarray, vcores: np.ndarray, step_s: float) -> dict[str, Any]:
    """`{"resourceAllocation": {...}}` as the Estimator answers (RLE, end marker 0/0)."""
    mem = np.asarray(memory_mb, dtype=np.int64)
    vc = np.asarray(vcores, dtype=np.int64)
    if mem.shape != vc.shape or mem.ndim != 1:
        raise ValueError("memory and vcores must be 1-D of equal length")
    alloc: dict[str, dict[str, int]] = {}
    prev: tuple[int, int] | None = None
    for k, pair in enumerate(zip(mem.tolist(), vc.tolist())):
        if pair != prev:
            alloc[_time_key(k * step_s)] = {"memory": pair[0], "vcores": pair[1]}
            prev = pair
    if mem.size:
        alloc[_time_key(mem.size * step_s)] = {"memory": 0, "vcores": 0}
    return {"resourceAllocation": alloc}


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
