"""Run-time state of a submitted job: which stages are runnable, which tasks wait or re-run.

A stage is runnable once all its parents finished. Its tasks launch in index order; a killed
task goes to the stage's `retry` list and launches again before new ones (YARN AMs ask for
failed attempts at a higher priority, e.g. MapReduce's PRIORITY_FAST_FAIL_MAP).
"""

from __future__ import annotations

from harvester.domain import Resources
from harvester.sim.workload import JobSpec, StageSpec


class StageRun:
    __slots__ = ("spec", "index", "durations", "next", "retry", "done", "waiting", "children",
                 "res", "cpu", "vcores", "mem", "tasks")

    def __init__(self, spec: StageSpec, index: int, cores_per_vcore: float) -> None:
        self.spec = spec
        self.index = index
        self.durations: list[float] = spec.durations_s.tolist()
        self.tasks = len(self.durations)
        self.next = 0
        self.retry: list[int] = []
        self.done = 0
        self.waiting = len(spec.parents)
        self.children: list[int] = []
        self.vcores = spec.vcores
        self.mem = spec.memory_mb
        self.res = Resources(spec.memory_mb, spec.vcores)
        self.cpu = spec.vcores * cores_per_vcore

    @property
    def pending(self) -> int:
        """Tasks ready to launch now (0 while parents run)."""
        if self.waiting:
            return 0
        return self.tasks - self.next + len(self.retry)

    def take(self, k: int) -> list[int]:
        """The next `k` task indexes to launch (re-runs first)."""
        out: list[int] = []
        while self.retry and len(out) < k:
            out.append(self.retry.pop())
        fresh = k - len(out)
        if fresh:
            out.extend(range(self.next, self.next + fresh))
            self.next += fresh
        return out


class JobRun:
    __slots__ = ("spec", "seq", "app_id", "stages", "runnable", "left", "start_s", "finish_s", "kills",
                 "wasted_cpu_s", "attempts", "queued", "max_concurrent", "containers", "tasks")

    def __init__(self, spec: JobSpec, seq: int, app_id: str, cores_per_vcore: float) -> None:
        self.spec = spec
        self.seq = seq
        self.app_id = app_id
        self.stages = [StageRun(s, i, cores_per_vcore) for i, s in enumerate(spec.stages)]
        for st in self.stages:
            for p in st.spec.parents:
                self.stages[p].children.append(st.index)
        self.runnable: list[StageRun] = [st for st in self.stages if not st.waiting]
        self.left = len(self.stages)
        self.start_s: float | None = None
        self.finish_s: float | None = None
        self.kills = 0
        self.wasted_cpu_s = 0.0
        self.attempts = 0
        self.queued = False
        self.max_concurrent = spec.max_concurrent_tasks()
        self.containers = 0
        self.tasks = spec.tasks

    @property
    def pending(self) -> int:
        return sum(st.pending for st in self.runnable)

    def stage_done(self, st: StageRun) -> int:
        """Mark `st` finished; unlock its children. Returns how many tasks became runnable."""
        self.left -= 1
        self.runnable.remove(st)
        unlocked = 0
        for c in st.children:
            child = self.stages[c]
            child.waiting -= 1
            if not child.waiting:
                self.runnable.append(child)
                unlocked += child.tasks
        return unlocked
