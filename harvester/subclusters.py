"""Several ResourceManagers behind one sidecar (`rm.clusters`; issue 29): YARN Federation
sub-clusters or separate clusters, each polled and actuated through its own RM (HA, auth).

Naming (the one design decision every other part follows):
- without `rm.clusters` there is ONE implicit sub-cluster named `default` (`DEFAULT`), its node
  ids are Hadoop's own `host:port`, unchanged — the store, `explain node`, the metrics and the
  RM plug-in's document are exactly what they were;
- with `rm.clusters`, every node id inside Harvester — the telemetry snapshot, the store (node
  samples, baselines, decision log), the guard, the metrics' `node` label, `explain node` — is
  QUALIFIED `<name>/<host:port>` (`qualify`). Hadoop node ids are host:port and never hold a
  "/", so the split back (`split`) is unambiguous and two clusters may repeat a host:port
  without colliding in the one store. Container ids are qualified the same way (under
  Federation one app's containers live in several sub-clusters, each RM numbering its own; the
  guard keys kills by container id). App ids are not: under Federation one app id names one job
  across sub-clusters (`merge_runs`). Hostnames stay as the RM reports them, so
  `harvesting.tenants` rules match as before.

`FederatedSource` is the `TelemetrySource` over several sub-clusters: each poll asks every
sub-cluster's RM at once (one thread each) and merges the answers into one snapshot of
qualified ids. A sub-cluster whose poll failed contributes NO nodes (a snapshot is complete or
absent per sub-cluster): the guard then has nothing to act on there — RM down means no kill and
no new capacity on ITS nodes (decisions/guard.py's fail-safe) while the other sub-clusters go on;
with every sub-cluster failing the poll fails as one RM's would. Containers are "complete"
(can prove a kill GONE) only when every sub-cluster's list was read. Each sub-cluster's polls,
nodes and age are metrics labelled `subcluster`.

`RoutingActuator` sends each action to the actuator of the sub-cluster its node id names (the
id unqualified: the RM knows host:port), every sub-cluster's batch at once, and gives the errors
back qualified. A poll waits at most `telemetry.poll_interval_s` for each RM: a slow or hung one
counts as failed that round (and is not asked again until it answers), so it cannot make the
others' data stale.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from harvester.actuators.port import Actuator
from harvester.clock import Clock
from harvester.config import RMEndpointSettings, Settings
from harvester.domain import Action, ActionError, ClusterSnapshot, ContainerInfo, KillContainer, SetNodeCapacity
from harvester.loop.job_runs import JobRunSource
from harvester.models.job_history import JobRun, RunningApp
from harvester.observability.metrics import Metrics
from harvester.telemetry.source import TelemetryError, TelemetrySource

#: The name of the one implicit sub-cluster of `rm.urls` (and of the embedded emulator).
DEFAULT = "default"
SEP = "/"


@dataclass(frozen=True)
class SubCluster:
    name: str
    rm: RMEndpointSettings


def subclusters(settings: Settings) -> tuple[SubCluster, ...]:
    """`rm.clusters` as given, or the one implicit `default` sub-cluster of `rm.urls`."""
    if settings.rm.clusters:
        return tuple(SubCluster(c.name, c) for c in settings.rm.clusters)
    return (SubCluster(DEFAULT, settings.rm),)


def federated(settings: Settings) -> bool:
    """Whether node ids are qualified (`rm.clusters` given, cluster.source rm)."""
    return settings.cluster.source == "rm" and bool(settings.rm.clusters)


def qualify(name: str, node_id: str) -> str:
    return f"{name}{SEP}{node_id}"


def split(node_id: str) -> tuple[str | None, str]:
    """(sub-cluster, Hadoop node id) of a node id; (None, id) for an unqualified one."""
    name, sep, raw = node_id.partition(SEP)
    return (name, raw) if sep else (None, node_id)


def _qualified(name: str, snap: ClusterSnapshot) -> ClusterSnapshot:
    def container(c: ContainerInfo) -> ContainerInfo:
        return replace(c, container_id=qualify(name, c.container_id),
                       node_id=qualify(name, c.node_id) if c.node_id else c.node_id)

    return replace(snap, nodes=tuple(replace(n, node_id=qualify(name, n.node_id)) for n in snap.nodes),
                   containers=tuple(container(c) for c in snap.containers),
                   am_containers=tuple(container(c) for c in snap.am_containers))


@dataclass(frozen=True)
class PollState:
    """One sub-cluster's last poll, for /status and `explain node`."""

    ok: bool = False
    last_good: float | None = None
    nodes: int = 0
    error: str | None = None


class FederatedSource:
    """The `TelemetrySource` over several sub-clusters (module docstring)."""

    def __init__(self, sources: Mapping[str, TelemetrySource], metrics: Metrics, *, name: str = "rm",
                 prequalified: bool = False, wait_s: float | None = None) -> None:
        if not sources:
            raise ValueError("no sub-cluster to poll")
        self.name = name
        self._sources = dict(sources)
        self._metrics = metrics
        # the sources name their nodes `name/host:port` themselves (RMTelemetrySource's node_prefix):
        # no copy of every sample per poll (50,000 copies cost ~1-2 s on a loaded 2-core machine)
        self._prequalified = prequalified
        # a slow RM must not hold the others' data back: a poll waits at most `wait_s` (wall
        # seconds; the app gives telemetry.poll_interval_s) for each answer; one still running then
        # counts as failed this round and is not asked again until it has answered
        self._wait_s = wait_s
        self._running: dict[str, Future[ClusterSnapshot]] = {}
        self._pool = ThreadPoolExecutor(max_workers=len(self._sources), thread_name_prefix="subcluster-poll")
        self._lock = threading.Lock()
        self._state = {n: PollState() for n in self._sources}

    def states(self) -> dict[str, PollState]:
        with self._lock:
            return dict(self._state)

    def poll(self, now: float) -> ClusterSnapshot:
        errors: dict[str, str] = {}
        for n, source in self._sources.items():
            prev = self._running.get(n)
            if prev is not None and not prev.done():
                errors[n] = "RM poll failed: its previous poll has not answered yet"
                continue
            # a previous round's late answer (done now) is dropped: its data is old
            self._running[n] = self._pool.submit(source.poll, now)
        futures = {n: self._running[n] for n in self._sources if n not in errors}
        wait(list(futures.values()), timeout=self._wait_s)
        got: dict[str, ClusterSnapshot] = {}
        for n, fut in futures.items():
            if not fut.done():
                errors[n] = f"RM poll failed: no answer within {self._wait_s:g} s (telemetry.poll_interval_s)"
                continue  # stays running; not asked again until it answers
            del self._running[n]
            try:
                got[n] = fut.result()
            except TelemetryError as exc:
                errors[n] = str(exc)
        with self._lock:
            for n in self._sources:
                prev = self._state[n]
                if n in got:
                    self._state[n] = PollState(True, now, len(got[n].nodes), None)
                    self._metrics.record_subcluster_poll(n, True, dict(Counter(x.state for x in got[n].nodes)), 0.0)
                else:
                    self._state[n] = replace(prev, ok=False, error=errors[n])
                    self._metrics.record_subcluster_poll(
                        n, False, None, None if prev.last_good is None else max(0.0, now - prev.last_good))
        if not got:
            raise TelemetryError("every sub-cluster's poll failed: " + "; ".join(f"{n}: {e}" for n, e in errors.items()))
        parts = list(got.values()) if self._prequalified else [_qualified(n, s) for n, s in got.items()]
        return ClusterSnapshot(
            time=now, source=self.name,
            nodes=tuple(x for p in parts for x in p.nodes),
            containers=tuple(c for p in parts for c in p.containers),
            containers_complete=not errors and all(p.containers_complete for p in parts),
            am_containers=tuple(c for p in parts for c in p.am_containers),
            ams_complete=not errors and all(p.ams_complete for p in parts),
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _unqualified(a: Action, node_id: str) -> Action:
    """The action as its sub-cluster's RM names things (host:port, its own container id)."""
    if isinstance(a, KillContainer):
        return replace(a, node_id=node_id, container_id=split(a.container_id)[1])
    return replace(a, node_id=node_id)  # type: ignore[type-var]


def _requalified(a: Action, name: str) -> Action:
    if isinstance(a, KillContainer):
        return replace(a, node_id=qualify(name, a.node_id), container_id=qualify(name, a.container_id))
    return replace(a, node_id=qualify(name, a.node_id))  # type: ignore[type-var]


def _kind(a: Action) -> str:
    return "set_capacity" if isinstance(a, SetNodeCapacity) else "kill" if isinstance(a, KillContainer) else type(a).__name__


class RoutingActuator:
    """One `Actuator` per sub-cluster behind the guard's one (module docstring)."""

    def __init__(self, actuators: Mapping[str, Actuator], metrics: Metrics) -> None:
        self._actuators = dict(actuators)
        self._metrics = metrics
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self._actuators)), thread_name_prefix="subcluster-act")
        self._lock = threading.Lock()
        self._unroutable: list[ActionError] = []

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        batches: dict[str, list[tuple[Action, Action]]] = {}
        for a in actions:
            name, raw = split(getattr(a, "node_id", ""))
            if name is None or name not in self._actuators:
                with self._lock:
                    self._unroutable.append(ActionError(a, a.data_at or 0.0, f"node {getattr(a, 'node_id', '')!r} "
                                                        "names no configured sub-cluster (rm.clusters): not sent"))
                continue
            batches.setdefault(name, []).append((_unqualified(a, raw), a))
        # each RM at once: one slow RM spends its own time budget, not the others'
        running = {name: self._pool.submit(self._actuators[name].apply, [raw for raw, _ in pairs], request_id)
                   for name, pairs in batches.items()}
        sent: list[Action] = []
        for name, pairs in batches.items():
            by_id = {id(raw): orig for raw, orig in pairs}
            done = running[name].result()
            out = [by_id.get(id(r), r) for r in done]
            sent += out
            for kind, n in Counter(_kind(a) for a in out).items():
                self._metrics.record_subcluster_actions(name, kind, "sent", n)
            for kind, n in (Counter(_kind(o) for _, o in pairs) - Counter(_kind(a) for a in out)).items():
                self._metrics.record_subcluster_actions(name, kind, "not_sent", n)
        return sent

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def poll_errors(self) -> list[ActionError]:
        with self._lock:
            out, self._unroutable = self._unroutable, []
        for name, act in self._actuators.items():
            out += [replace(e, action=_requalified(e.action, name)) for e in act.poll_errors()]
        return out


def merge_runs(runs: Sequence[JobRun]) -> list[JobRun]:
    """One run per app id. Under YARN Federation one application can run in several
    sub-clusters (its home RM, and an unmanaged AM in each secondary sub-cluster it spans, all
    under the SAME app id); its parts are one job: the earliest-submitted part (the home) keeps
    its name, queue, status and skyline, the span covers every part, container-seconds add up,
    and the peak is the sum of the parts' peaks (an upper bound: the parts' peaks need not
    coincide)."""
    by_app: dict[str, JobRun] = {}
    for run in sorted(runs, key=lambda r: r.started_at):
        base = by_app.get(run.app_id)
        if base is None:
            by_app[run.app_id] = run
            continue
        work = None if base.container_seconds is None and run.container_seconds is None else \
            (base.container_seconds or 0.0) + (run.container_seconds or 0.0)
        by_app[run.app_id] = replace(base, finished_at=max(base.finished_at, run.finished_at),
                                     peak_containers=base.peak_containers + run.peak_containers, container_seconds=work)
    return list(by_app.values())


class FederatedJobRuns:
    """The finished and running apps of every sub-cluster, one row per app id (`merge_runs`;
    only parts that finish within one poll are joined: a part seen in a later poll replaces the
    stored row — the store keeps one row per app id). A failing sub-cluster fails the poll: the
    jobs loop retries, and a later poll's `since` still covers what was missed."""

    def __init__(self, sources: Mapping[str, JobRunSource]) -> None:
        self._sources = dict(sources)

    def poll(self, since: float) -> list[JobRun]:
        return merge_runs([run for s in self._sources.values() for run in s.poll(since)])

    def running(self) -> list[RunningApp]:
        seen: dict[str, RunningApp] = {}
        for app in sorted((a for s in self._sources.values() for a in s.running()), key=lambda a: a.started_at):
            base = seen.get(app.app_id)
            seen[app.app_id] = app if base is None else replace(
                base, containers=base.containers + app.containers, allocated_mb=base.allocated_mb + app.allocated_mb,
                allocated_vcores=base.allocated_vcores + app.allocated_vcores)
        return list(seen.values())


def status(settings: Settings, source: object, clock: Clock) -> list[dict[str, Any]]:
    """Each sub-cluster for /status: name, RM URLs (redacted), its last poll."""
    from rm_client.redact import redact_url

    states = source.states() if isinstance(source, FederatedSource) else {}
    now = clock.now()
    out = []
    for sc in subclusters(settings):
        st = states.get(sc.name)
        out.append({"name": sc.name, "rm_url": [redact_url(str(u)) for u in sc.rm.urls],
                    **({} if st is None else {"last_poll_ok": st.ok, "nodes": st.nodes, "error": st.error,
                                              "telemetry_age_s": None if st.last_good is None else now - st.last_good})})
    return out
