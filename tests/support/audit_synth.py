"""Synthetic recurring pipelines as a real HDFS 3.3.6 NameNode audit log and YARN 3.3.6 RM apps
answer, in the exact format of the recording fixtures hdfs-3.3.6/provenance-recurring (its
README describes every line kind used here), with the ground truth next to them.

A `PipelineSpec` is a chain of MapReduce stages run once per period: stage 1 is submitted
`submit_s` after the nominal period start (the ingest CLI puts its input 1-3 s before), each
later stage `gap_s` after the previous one finished (a workflow client), each reads the previous
stage's output and commits its own (FileOutputCommitter: `_temporary` attempt files renamed into
place, `_SUCCESS` by the AM), and the consumer (`callerContext=CLI`, like `hdfs dfs -cat`)
lists and opens the last output at its fixed time `read_s` after the period start, or 1 s after
the output appears when that is later. `read_s` None: nobody reads it. Per period one may be
`late` (stage 1 submitted later by that many seconds), `slow` (one stage's duration times a
factor) or `missing` (not run at all); stage 1's submit and the consumer's read move by up to
±`jitter_s` (clock jitter), a later stage's submit by up to `jitter_s`/2 after its `gap_s`,
every duration by up to ±3 %. `adhoc_reads` adds a one-off YARN application
that opens the OUTPUT OF AN OLD PERIOD of a pipeline (a backfill, not a consumer).

`generate(...)` returns the audit-log lines, the RM's `GET /ws/v1/cluster/apps` document (each
app a copy of a recorded one with its own id, name and times) and the truth per pipeline.
Used by tests/models/test_slo_inference_properties.py and bench/slo_inference.py.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

CLUSTER_TS = 1795504076245
TEMPLATE_APPS = Path(__file__).resolve().parents[1] / "data" / "shared" / "fixtures" / "hdfs-3.3.6" / \
    "provenance-recurring" / "rm-apps.json"
LINE = ("{ts} INFO FSNamesystem.audit: allowed=true\tugi=root (auth:SIMPLE)\tip=/127.0.0.1\tcmd={cmd}\t"
        "src={src}\tdst={dst}\tperm={perm}\tproto=rpc")
FILE_PERM = "root:supergroup:rw-r--r--"
DIR_PERM = "root:supergroup:rwxr-xr-x"
DURATION_NOISE = 0.03  # a stage's duration varies by up to ±3 % from period to period


@dataclass(frozen=True)
class StageSpec:
    name: str
    duration_s: float  # submit -> finish
    gap_s: float = 3.5  # submitted this long after the previous stage finished (stage 1: unused)


@dataclass(frozen=True)
class PipelineSpec:
    prefix: str  # HDFS directory of the pipeline's data
    stages: tuple[StageSpec, ...]
    period_s: float
    submit_s: float  # stage 1's submit after the nominal period start
    read_s: float | None  # the consumer's read after the nominal period start (None: nobody reads)
    periods: int
    first_period: int = 0  # period n starts at (first_period + n) · period_s (epoch seconds)
    late: dict[int, float] = field(default_factory=dict)
    slow: dict[int, tuple[int, float]] = field(default_factory=dict)  # period -> (stage index, duration factor)
    missing: frozenset[int] = frozenset()
    jitter_s: float = 2.0


@dataclass(frozen=True)
class StageRun:
    app_id: str
    submit: float
    finish: float


@dataclass
class PipelineTruth:
    spec: PipelineSpec
    runs: dict[tuple[int, int], StageRun] = field(default_factory=dict)  # (period, stage) -> run
    reads: dict[int, float] = field(default_factory=dict)  # period -> the consumer's read

    def start(self, n: int) -> float:
        """Nominal start of period n (epoch seconds)."""
        return (self.spec.first_period + n) * self.spec.period_s

    def deadline(self, n: int) -> float:
        """The consumer's fixed read time in period n (any n, also in the future)."""
        assert self.spec.read_s is not None
        return self.start(n) + self.spec.read_s

    def end(self, n: int) -> float:
        """When the last stage finished in period n."""
        return self.runs[(n, len(self.spec.stages) - 1)].finish

    def worst_end_shift(self) -> float:
        """How far the last stage's end can move from its nominal time by the noise alone."""
        j = self.spec.jitter_s
        return j + sum(j / 2 + DURATION_NOISE * s.duration_s for s in self.spec.stages)

    def app(self, n: int, stage: int) -> str:
        return self.runs[(n, stage)].app_id


@dataclass(frozen=True)
class AdhocRead:
    pipeline: int  # index into the specs
    period: int  # whose output it reads
    at: float  # epoch seconds


class _Log:
    def __init__(self) -> None:
        self.lines: list[tuple[float, int, str]] = []
        self.apps: list[dict] = []
        self.template = json.loads(TEMPLATE_APPS.read_text())["apps"]["app"][0]
        self.seq = 0

    def line(self, t: float, cmd: str, src: str, ctx: str | None, dst: str = "null", perm: str = "null") -> None:
        ms = int(round(t * 1000))
        stamp = datetime.fromtimestamp(ms // 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S") + f",{ms % 1000:03d}"
        text = LINE.format(ts=stamp, cmd=cmd, src=src, dst=dst, perm=perm)
        self.lines.append((ms / 1000.0, len(self.lines), text if ctx is None else f"{text}\tcallerContext={ctx}"))

    def app(self, name: str, submit: float, finish: float) -> str:
        self.seq += 1
        app_id = f"application_{CLUSTER_TS}_{self.seq:04d}"
        doc = copy.deepcopy(self.template)
        started, launched, finished = (int(round(t * 1000)) for t in (submit, submit + 0.05, finish))
        doc.update(id=app_id, name=name, applicationTags="", startedTime=started, launchTime=launched,
                   finishedTime=finished, elapsedTime=finished - started,
                   trackingUrl=f"http://localhost:8088/proxy/{app_id}/",
                   amContainerLogs=f"http://localhost:8044/node/containerlogs/container_{CLUSTER_TS}_{self.seq:04d}_01_000001/root")
        self.apps.append(doc)
        return app_id

    def mr_job(self, name: str, submit: float, finish: float, inputs: list[str], out: str) -> str:
        """One MapReduce application: client staging, NodeManager localization (no caller
        context), the map attempt reading `inputs` and committing `out/part-00000`, the AM's
        commit — the line kinds of the recording, in its order."""
        app = self.app(name, submit, finish)
        n = app.rsplit("_", 1)[1]
        job, attempt = f"job_{CLUSTER_TS}_{n}", f"attempt_{CLUSTER_TS}_{n}_m_000000_0"
        staging = f"/tmp/hadoop-yarn/staging/root/.staging/{job}"
        am, task = f"mr_appmaster_appattempt_{CLUSTER_TS}_{n}_000001", f"mr_attempt_{CLUSTER_TS}_{n}_m_000000_0"
        span = finish - submit
        self.line(submit - 0.9, "getfileinfo", out, "CLI")
        self.line(submit - 0.8, "mkdirs", staging, "CLI", perm=DIR_PERM)
        self.line(submit - 0.7, "create", f"{staging}/job.jar", "CLI", perm=FILE_PERM)
        self.line(submit - 0.1, "getfileinfo", out, "CLI")
        self.line(submit + 0.3, "open", f"{staging}/job.jar", None)  # NodeManager localization
        self.line(submit + 0.2 * span, "mkdirs", f"{out}/_temporary/1", am, perm=DIR_PERM)
        for i, path in enumerate(inputs):
            self.line(submit + 0.3 * span + 0.01 * i, "open", path, task)
        tmp = f"{out}/_temporary/1/_temporary/{attempt}/part-00000"
        self.line(submit + 0.35 * span, "create", tmp, task, perm=FILE_PERM)
        self.line(finish - 0.6, "rename", tmp, task, dst=f"{out}/part-00000", perm=FILE_PERM)
        self.line(finish - 0.4, "delete", f"{out}/_temporary", am)
        self.line(finish - 0.35, "create", f"{out}/_SUCCESS", am, perm=FILE_PERM)
        return app


def _out(spec: PipelineSpec, stage: int, n: int) -> str:
    return f"{spec.prefix}/{spec.stages[stage].name}/p{n}"


def generate(specs: list[PipelineSpec], seed: int = 0,
             adhoc_reads: tuple[AdhocRead, ...] = ()) -> tuple[list[str], dict, list[PipelineTruth]]:
    """(audit-log lines, RM apps document, truth per spec) — module docstring."""
    rng = np.random.default_rng(seed)
    log = _Log()
    truths = []
    for spec in specs:
        truth = PipelineTruth(spec)
        j = spec.jitter_s
        for n in range(spec.periods):
            if n in spec.missing:
                continue
            t0 = truth.start(n)
            submit = t0 + spec.submit_s + spec.late.get(n, 0.0) + rng.uniform(-j, j)
            src = f"{spec.prefix}/in/p{n}/data.txt"
            put = submit - rng.uniform(1.0, 3.0)
            log.line(put, "create", f"{src}._COPYING_", "CLI", perm=FILE_PERM)
            log.line(put + 0.05, "rename", f"{src}._COPYING_", "CLI", dst=src, perm=FILE_PERM)
            inputs = [src]
            for k, st in enumerate(spec.stages):
                if k:
                    submit = truth.runs[(n, k - 1)].finish + st.gap_s + rng.uniform(0.0, j / 2)
                factor = spec.slow[n][1] if n in spec.slow and spec.slow[n][0] == k else 1.0
                duration = st.duration_s * factor * rng.uniform(1 - DURATION_NOISE, 1 + DURATION_NOISE)
                app = log.mr_job(st.name, submit, submit + duration, inputs, _out(spec, k, n))
                truth.runs[(n, k)] = StageRun(app, submit, submit + duration)
                inputs = [f"{_out(spec, k, n)}/part-00000"]
            if spec.read_s is not None:
                end = truth.runs[(n, len(spec.stages) - 1)].finish
                at = max(t0 + spec.read_s + rng.uniform(-j, j), end + 1.0)
                last = _out(spec, len(spec.stages) - 1, n)
                log.line(at - 0.02, "listStatus", last, "CLI")
                log.line(at, "open", f"{last}/part-00000", "CLI")
                truth.reads[n] = at
        truths.append(truth)
    for i, a in enumerate(adhoc_reads):
        spec = specs[a.pipeline]
        old = f"{_out(spec, len(spec.stages) - 1, a.period)}/part-00000"
        log.mr_job(f"adhoc-backfill-{i}", a.at, a.at + 30.0, [old], f"/adhoc/backfill-{i}")
    lines = [text for _, _, text in sorted(log.lines)]
    return lines, {"apps": {"app": log.apps}}, truths


def chain(prefix: str, period_s: float, durations: list[float], *, submit_s: float, read_s: float | None,
          periods: int, gap_s: float = 3.5, **kw) -> PipelineSpec:
    """A pipeline of stages `<prefix>-s1`, `-s2`, ... with the given durations."""
    name = prefix.strip("/").replace("/", "-")
    stages = tuple(StageSpec(f"{name}-s{i + 1}", d, gap_s) for i, d in enumerate(durations))
    first = math.floor(1_795_000_000 / period_s) + 1
    return PipelineSpec(prefix, stages, float(period_s), submit_s, read_s, periods, first, **kw)
