"""The provenance graph of Morpheus §4 (paper 002): jobs and files, joined by reads and writes — pure.

"Nodes represent jobs and files in our clusters, and edges capture read/write operations among
jobs, files, and all ingress/egress operations." Two parsers feed the same event model
(harvester.telemetry.provenance_log): the HDFS NameNode audit log, whose `callerContext` ties a
call to the YARN application that made it, and a documented JSONL format (docs/morpheus.md).

Event model: a `FileAccess` is one read, write or delete of one path at one time by one actor:
a YARN run (`run_id`, an application id) or a client outside YARN (`run_id` None; `actor` is
its caller context, e.g. `CLI` for `hdfs dfs` and job clients). A rename is a delete of the
source and a write of the destination at the same time. A `RunRecord` gives a run's recurring
job name and its submit / start / finish times (from the RM's apps or the JSONL).

What counts (so that job plumbing does not look like dataflow):
- PRIVATE paths are ignored: any path with a `_temporary` component (uncommitted output of
  Hadoop's FileOutputCommitter), a `._COPYING_` file (FsShell's in-flight copy), a path naming
  a job or application id (`job_<ts>_<n>`, `application_<ts>_<n>`: MapReduce staging and history
  files, Spark staging) and any configured prefix.
- Reads without a caller context are not consumers: that is how NodeManager localization of
  job files appears (fixtures hdfs-3.3.6/provenance-recurring README), and a consumer that
  cannot be named cannot be told apart from it.
- A run's own reads of its own output are not consumption.
A read of a file is matched to the writes of that file or of any ancestor directory (a job may
commit a whole directory by one rename).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence

RUN_ID = re.compile(r"(?:application|appattempt|attempt|job|container)_(?:e\d+_)?(\d{5,})_(\d{4,})")
PRIVATE_ID = re.compile(r"(?:^|[/_.-])(?:job|application)_\d{5,}_\d{4,}")


class Access(str, Enum):
    READ = "read"
    WRITE = "write"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class FileAccess:
    """One access; `time` in epoch seconds. `actor` is the caller context as logged ('' if none)."""

    time: float
    access: Access
    path: str
    run_id: str | None
    actor: str
    op: str = ""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of a recurring job (epoch seconds). `started_at` is when it began executing (the
    RM's launchTime of its AM), None when unknown; `submitted_at` is the RM's startedTime."""

    job: str
    run_id: str
    submitted_at: float
    started_at: float | None
    finished_at: float | None

    @property
    def start(self) -> float:
        return self.started_at if self.started_at is not None else self.submitted_at


def run_id_of(caller_context: str) -> str | None:
    """The YARN application id named by a caller context (MapReduce AM and task attempts, Spark,
    container ids), or None (a client outside YARN, e.g. `CLI`)."""
    m = RUN_ID.search(caller_context)
    return f"application_{m.group(1)}_{m.group(2)}" if m else None


def is_private(path: str, extra_prefixes: Sequence[str] = ()) -> bool:
    """Job plumbing rather than dataflow (module doc)."""
    if "/_temporary/" in path + "/" or path.endswith("._COPYING_") or PRIVATE_ID.search(path):
        return True
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in extra_prefixes)


def _ancestors(path: str) -> list[str]:
    out = [path]
    while "/" in path.strip("/"):
        path = path.rsplit("/", 1)[0]
        out.append(path)
    return out


@dataclass(frozen=True)
class ProvenanceGraph:
    """File accesses indexed by path, and runs by id (build with `build_graph`)."""

    runs: dict[str, RunRecord]
    writes: dict[str, list[tuple[float, str, str]]]  # path -> sorted (time, run_id or "" for a client, actor)
    reads: dict[str, list[tuple[float, str | None, str]]]  # path -> sorted (time, run_id, actor)
    read_by_run: dict[str, dict[str, float]]  # run -> path -> first read time
    written_by_run: dict[str, dict[str, float]]  # run -> path -> last write time
    _read_paths: list[str] = field(repr=False)

    def last_writer_before(self, path: str, t: float, *, exclude_run: str | None = None) -> tuple[float, str, str] | None:
        """The latest write of `path` or of an ancestor directory strictly before `t`, not by
        `exclude_run`: (time, run id or "" for a client, actor)."""
        best = None
        for p in _ancestors(path):
            for w in reversed(self.writes.get(p, ())):
                if w[0] < t and w[1] != exclude_run:
                    best = w if best is None or w[0] > best[0] else best
                    break
        return best

    def last_write_before(self, path: str, t: float, *, exclude_run: str | None = None) -> float | None:
        """Time of `last_writer_before`."""
        w = self.last_writer_before(path, t, exclude_run=exclude_run)
        return None if w is None else w[0]

    def label(self, run_id: str | None, actor: str) -> str:
        """A reader or writer as SLOs name it: its run's job, else `client:<caller context>`."""
        return self.runs[run_id].job if run_id in self.runs else (run_id or f"client:{actor}")

    def next_write_after(self, path: str, t: float) -> float | None:
        ws = self.writes.get(path, ())
        i = bisect.bisect_right(ws, t, key=lambda w: w[0])
        return ws[i][0] if i < len(ws) else None

    def first_read_after(self, path: str, t: float, *, exclude_run: str, until: float | None = None,
                         skip: frozenset[str] = frozenset()) -> tuple[float, str] | None:
        """First read of `path` (or of a file under it) after `t` by a named actor other than
        `exclude_run`, before `path` is written again and before `until` (when the output was
        superseded, `superseded_at`: a later read is of an old output): (time, reader label).
        Readers whose label is in `skip` are passed over."""
        end = self.next_write_after(path, t)
        if until is not None:
            end = until if end is None else min(end, until)
        prefix = path.rstrip("/") + "/"
        # The path itself, then the paths under it ("/" sorts just before "0").
        lo = bisect.bisect_left(self._read_paths, prefix)
        hi = bisect.bisect_left(self._read_paths, prefix[:-1] + "0")
        best: tuple[float, str] | None = None
        for p in ([path] if path in self.reads else []) + self._read_paths[lo:hi]:
            reads = self.reads[p]
            for rt, rid, actor in reads[bisect.bisect_left(reads, t, key=lambda r: r[0]):]:
                if end is not None and rt >= end or (best is not None and rt >= best[0]):
                    break
                if rid == exclude_run or (rid is None and not actor):
                    continue
                label = self.label(rid, actor)
                if label not in skip:
                    best = (rt, label)
                    break
        return best

    def consumers(self, run_id: str, until: float | None = None) -> set[str]:
        """Jobs (or `client:<context>`) that read any output of `run_id` before it was old (`until`)."""
        out = set()
        for path, wt in self.written_by_run.get(run_id, {}).items():
            hit = self.first_read_after(path, wt, exclude_run=run_id, until=until)
            if hit:
                out.add(hit[1])
        return out

    def producers(self, run_id: str) -> set[str]:
        """Jobs that last wrote an input of `run_id` before it read it (`client:<context>` for clients)."""
        out = set()
        for path, rt in self.read_by_run.get(run_id, {}).items():
            for p in _ancestors(path):
                prior = [w for w in self.writes.get(p, ()) if w[0] < rt and w[1] != run_id]
                if prior:
                    _, rid, actor = prior[-1]
                    out.add(self.label(rid or None, actor))
                    break
        return out


def build_graph(accesses: Iterable[FileAccess], runs: Iterable[RunRecord],
                private_prefixes: Sequence[str] = ()) -> ProvenanceGraph:
    """Index `accesses` (private paths dropped, module doc) by path and by run."""
    writes: dict[str, list[tuple[float, str, str]]] = {}
    reads: dict[str, list[tuple[float, str | None, str]]] = {}
    read_by_run: dict[str, dict[str, float]] = {}
    written_by_run: dict[str, dict[str, float]] = {}
    for a in accesses:
        if is_private(a.path, private_prefixes):
            continue
        if a.access is Access.WRITE:
            writes.setdefault(a.path, []).append((a.time, a.run_id or "", a.actor))
            if a.run_id:
                prev = written_by_run.setdefault(a.run_id, {}).get(a.path)
                written_by_run[a.run_id][a.path] = a.time if prev is None else max(prev, a.time)
        elif a.access is Access.READ:
            reads.setdefault(a.path, []).append((a.time, a.run_id, a.actor))
            if a.run_id:
                prev = read_by_run.setdefault(a.run_id, {}).get(a.path)
                read_by_run[a.run_id][a.path] = a.time if prev is None else min(prev, a.time)
    for lst in writes.values():
        lst.sort()
    for lst in reads.values():
        lst.sort(key=lambda r: (r[0], r[1] or "", r[2]))
    return ProvenanceGraph({r.run_id: r for r in runs}, writes, reads, read_by_run, written_by_run, sorted(reads))


def superseded_at(graph: ProvenanceGraph) -> dict[str, float | None]:
    """Run id -> when its output became OLD: the first output written by the job's run after
    next (None: not yet). A read after that is of an old period's output — a backfill or an
    ad-hoc look at history, not the consumption that makes a deadline (§4's T_outRead). The
    previous period's output still counts: a slow run may overlap the next period's run."""
    by_job: dict[str, list[RunRecord]] = {}
    for r in graph.runs.values():
        by_job.setdefault(r.job, []).append(r)
    out: dict[str, float | None] = {}
    for runs in by_job.values():
        later: list[float | None] = [None, None]  # the first writes of the next two runs that wrote
        for r in sorted(runs, key=lambda r: (r.submitted_at, r.run_id), reverse=True):
            out[r.run_id] = later[1]
            written = graph.written_by_run.get(r.run_id)
            if written:
                later = [min(written.values()), later[0]]
    return out


@dataclass(frozen=True, slots=True)
class ProvenanceCursor:
    """How far one provenance source was read: `offset` bytes into the file `path` whose
    identity is `file_id` (device:inode; a new identity means the file was rotated)."""

    source: str
    path: str
    file_id: str
    offset: int
