"""The Hadoop Resource Estimator's skyline history (hadoop-resourceestimator 3.3.6) — pure.

What its translator makes of a native log (`NativeSingleLineParser` + `BaseLogParser`), what
its history store answers (`InMemoryStore`), what its solver is given (`SolverPreprocessor`)
and how it writes all of it (Gson). The REST service on top is advice/estimator_service.py;
the recordings are tests/data/shared/fixtures/resourceestimator-3.3.6.

- A line `pipelineId n submit start end runId memUsage coreUsage` is one `ResourceSkyline` of
  the run `RecurrenceId(pipelineId, runId)`, job id = runId, container <1024 MB, 1 vcore>,
  allocation = the `coreUsage` units as an RLE (skyline_formats.rle_from_units). Lines of the
  same run are kept as a list (the solver adds them up). Fields 1-4 and memUsage are not read.
- The parser's map, the store's map and a filtered history are Java HashMaps: they iterate in
  `java_hashmap.iteration_order`, which decides the order of the history answer, which run a
  duplicate error names, and which skyline's container the estimate is counted in.
- The solver's input per run: its skylines added up and discretized (`rle_steps`), in
  containers of the first skyline's size; K = the longest run's steps.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from harvester.domain import Resources
from harvester.models.java_hashmap import capacity_for, iteration_order, string_hash
from harvester.models.skyline_formats import Rle, rle_from_units, rle_of_steps, rle_steps, rle_sum, units_of

NATIVE_CONTAINER = Resources(1024, 1)  # NativeSingleLineParser: "each container is allocated <1 core, 1GB RAM>"
_BLANKS = " \t\n\x0b\f\r"  # Java's \s
_WHITESPACE = re.compile(f"[{_BLANKS}]+")
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, order=True)
class RecurrenceId:
    pipeline_id: str
    run_id: str

    def java_hash(self) -> int:
        """`RecurrenceId.hashCode()`: pipelineId.hashCode() ^ runId.hashCode()."""
        return string_hash(self.pipeline_id) ^ string_hash(self.run_id)

    def __str__(self) -> str:
        return f"{{pipelineId: {self.pipeline_id}, runId: {self.run_id}}}"

    def document(self) -> dict[str, str]:
        return {"pipelineId": self.pipeline_id, "runId": self.run_id}


@dataclass(frozen=True)
class ResourceSkyline:
    """One job's allocation over time: `allocation` counts containers of `container` size."""

    job_id: str
    container: Resources
    allocation: Rle

    @property
    def finish_time(self) -> int:
        """`getLatestNonNullTime()`: the allocation's end, -1 when empty."""
        return self.allocation[-1][0] if self.allocation else -1

    def document(self) -> dict[str, Any]:
        """The Estimator's JSON of a `ResourceSkyline` (fields in its declaration order)."""
        return {"jobId": self.job_id, "jobInputDataSize": 0.0, "jobSubmissionTime": 0,
                "jobFinishTime": self.finish_time, "containerSpec": resource_document(self.container),
                "skylineList": allocation_document(self.allocation, self.container)}


History = list[tuple[RecurrenceId, list[ResourceSkyline]]]


@dataclass(frozen=True)
class EstimatorHistory:
    """What the store holds: runs in insertion order, each with its skylines; `largest`: the most
    runs it ever held (a HashMap's capacity never shrinks)."""

    runs: History
    largest: int


class LogLineError(ValueError):
    """A line the Estimator's parser throws on (it stores nothing of the file then): `kind` is
    "fields" (too few: its ArrayIndexOutOfBoundsException) or "number" (NumberFormatException)."""

    def __init__(self, line_no: int, kind: str, message: str) -> None:
        super().__init__(f"line {line_no}: {message}")
        self.line_no, self.kind = line_no, kind


class DuplicateRun(Exception):
    """A run is already in the history with the same job id (the store adds nothing then)."""

    def __init__(self, rid: RecurrenceId) -> None:
        super().__init__(f"Trying to addHistory duplicate resource skylines for {rid}. Use updateHistory function instead.")
        self.rid = rid


def log_lines(text: str) -> list[str]:
    """Lines as Java's readLine ends them (\n, \r or \r\n; not str.splitlines's other separators)."""
    return _LINE_ENDS.split(text.removesuffix("\r\n").removesuffix("\n").removesuffix("\r"))


def parse_native_log(lines: Iterable[str], time_interval: int) -> History:
    """The translator's map of a log: runs in the parser's HashMap order, each with its
    skylines in line order. Blank lines are skipped; any other line the Estimator throws on
    raises `LogLineError` (the caller stores nothing)."""
    runs: dict[RecurrenceId, list[ResourceSkyline]] = {}
    for no, line in enumerate(lines, 1):
        if not line.strip(_BLANKS):
            continue
        # fields split on Java's \s+ (ASCII blanks); a leading blank is ignored (the Estimator would
        # read an empty pipeline id and every field one place off)
        f = _WHITESPACE.split(line.strip(_BLANKS))
        if len(f) < 8:
            raise LogLineError(no, "fields", f"{len(f)} fields; a native log line has 8: pipelineId numInstances "
                                             "submitTime startTime finishTime runId memUsage coreUsage")
        try:
            units = units_of(f[7])
        except ValueError as exc:
            raise LogLineError(no, "number", f"coreUsage {exc}") from None
        rid = RecurrenceId(f[0], f[5])
        runs.setdefault(rid, []).append(ResourceSkyline(f[5], NATIVE_CONTAINER, rle_from_units(units, time_interval)))
    order = iteration_order(((rid.java_hash(), rid) for rid in runs), capacity_for(len(runs)))
    return [(rid, runs[rid]) for rid in order]


def store_order(entries: Sequence[tuple[RecurrenceId, list[ResourceSkyline]]], largest_size: int) -> History:
    """The store's HashMap order of `entries` (given in insertion order; the map has held at most
    `largest_size` runs)."""
    return iteration_order(((rid.java_hash(), (rid, sk)) for rid, sk in entries), capacity_for(largest_size))


def filtered_order(entries: Sequence[tuple[RecurrenceId, list[ResourceSkyline]]], largest_size: int) -> History:
    """`getHistory(pipelineId, "*")`: a new HashMap filled in the store's order."""
    ordered = store_order(entries, largest_size)
    return iteration_order(((rid.java_hash(), (rid, sk)) for rid, sk in ordered), capacity_for(len(ordered)))


class TooLong(ValueError):
    """A run spans more steps than the solver is allowed."""


def containers_per_step(history: History, time_interval: int, max_steps: int) -> tuple[np.ndarray, Resources]:
    """The solver's input: per run (rows, in `history`'s order) the containers in use per step,
    its skylines added up, counted in the first skyline's container; runs padded with 0 to the
    longest. Also that container (the estimate's). `TooLong` above `max_steps` steps."""
    rows = []
    for rid, skylines in history:
        box = skylines[0].container
        memory = rle_sum([tuple((t, n * s.container.memory_mb) for t, n in s.allocation) for s in skylines])
        steps = -(-(memory[-1][0] - memory[0][0]) // time_interval) if memory else 0
        if steps > max_steps:
            raise TooLong(f"run {rid} spans {steps} steps of {time_interval}, more than {max_steps}")
        rows.append(np.floor(rle_steps(memory, time_interval) / box.memory_mb))
    k = max((r.size for r in rows), default=0)
    out = np.zeros((len(rows), k))
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out, history[0][1][0].container


def estimate_allocation(containers: Sequence[int], time_interval: int) -> Rle:
    """Containers per step [k·interval, (k+1)·interval) as the Estimator's RLE."""
    return tuple((int(t), int(n)) for t, n in rle_of_steps([int(n) for n in containers], time_interval))


def resource_document(r: Resources) -> dict[str, int]:
    return {"memory": r.memory_mb, "vcores": r.vcores}


def allocation_document(allocation: Rle, container: Resources) -> dict[str, Any]:
    """`{"resourceAllocation": {"<t>": {"memory", "vcores"}, ...}}` (RLESparseResourceAllocationSerDe)."""
    return {"resourceAllocation": {str(t): {"memory": n * container.memory_mb, "vcores": n * container.vcores}
                                   for t, n in allocation}}


def history_document(history: History | None) -> Any:
    """Gson's `Map<RecurrenceId, List<ResourceSkyline>>` with complex map keys: a list of
    [key, value] pairs, `{}` when empty, `null` for none."""
    if history is None:
        return None
    if not history:
        return {}
    return [[rid.document(), [s.document() for s in skylines]] for rid, skylines in history]


_GSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "=": "\\u003d", "'": "\\u0027",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}


def gson(doc: Any) -> bytes:
    """JSON as Gson writes it: compact, non-ASCII as is, HTML characters escaped (they only
    occur inside strings, so replacing them anywhere is safe)."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in _GSON_ESCAPES.items():
        if ch in text:
            text = text.replace(ch, esc)
    return text.encode()
