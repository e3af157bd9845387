"""The cluster model shared by the simulator and the YARN emulator ("one model, two faces").

What it models, from the recorded behaviour of a real Hadoop 3.3.6 RM
(../shared/fixtures/README.md, "Behaviour over time"):

- Nodes: the NodeManager's configured resources (`total`), the capacity the scheduler may
  use now (`capacity`, changed by a node resource update), what running containers hold
  (`allocated`), the host's physical cores, and the primary tenant's CPU and memory.
- Containers: owner app, node, size, start time, AM or not, priority, the physical cores the
  task burns while it runs.
- Node resource update with `overCommitTimeout` in MILLISECONDS: -1 kills nothing (the node
  runs over-committed, available goes negative); T >= 0 kills, once T has passed, the
  YOUNGEST non-AM containers, exactly enough for the allocation to fit (never the AM).
  A vcores-only cut kills too (dominant resource calculator: both dimensions must fit).
- Utilization as the NM reports it: `nodeCPUUsage` is the whole host in physical cores
  (primary + containers, capped at the host's cores); `containersCPUUsage` is in vcores
  (cores scaled by total vcores / physical cores).

Time is whatever the caller passes in (`now`, epoch seconds): the model never reads a clock.
Deferred work (an over-commit deadline) is kept in a heap and happens in `advance(now)`.

Storage is columnar (numpy arrays indexed by node) so the simulator can update 10,000
nodes' primary usage in one vectorized step; per-container state is a small slotted object.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Iterator

import numpy as np

from harvester.domain import Resources


class EndCause(str, Enum):
    """Why a container stopped; each face maps it to the exit status its consumers see."""

    COMPLETED = "COMPLETED"            # the task finished (exit 0)
    RM_OVERCOMMIT = "RM_OVERCOMMIT"    # node capacity cut below allocation (NM -106, AM -102)
    PRIMARY = "PRIMARY"                # killed so the primary tenant gets its resources
    SIGNAL_GRACEFUL = "SIGNAL_GRACEFUL"    # GRACEFUL_SHUTDOWN → SIGTERM (exit 143)
    SIGNAL_FORCEFUL = "SIGNAL_FORCEFUL"    # FORCEFUL_SHUTDOWN → SIGKILL (exit 137)
    APP_KILLED = "APP_KILLED"          # the whole application was killed
    NODE_LOST = "NODE_LOST"            # the node left the cluster


@dataclass(slots=True, eq=False)
class Container:
    container_id: str
    app_id: str
    node: int
    memory_mb: int
    vcores: int
    started_at: float
    is_am: bool = False
    priority: int = 0
    cpu_cores: float = 0.0
    ended_at: float | None = None
    end_cause: EndCause | None = None
    seq: int = 0  # allocation order: higher = younger (ties on started_at broken by it)

    @property
    def running(self) -> bool:
        return self.ended_at is None

    @property
    def resources(self) -> Resources:
        return Resources(self.memory_mb, self.vcores)


@dataclass(frozen=True, slots=True)
class NodeUtilization:
    """What the NM reports in `resourceUtilization` (units as the real RM, see module doc)."""

    node_cpu_cores: float
    containers_cpu_vcores: float
    node_memory_mb: float
    containers_memory_mb: float


@dataclass(order=True, slots=True)
class _Deadline:
    due: float
    seq: int
    node: int = field(compare=False)
    generation: int = field(compare=False)


class ClusterModel:
    """Nodes, containers, capacity updates and kills. See the module docstring for semantics."""

    def __init__(self) -> None:
        self.node_ids: list[str] = []
        self.racks: list[str] = []
        self.hostnames: list[str] = []
        self._index: dict[str, int] = {}
        n = 0
        self.physical_cores = np.zeros(n, dtype=np.float64)
        self.total_mem = np.zeros(n, dtype=np.int64)
        self.total_vcores = np.zeros(n, dtype=np.int64)
        self.cap_mem = np.zeros(n, dtype=np.int64)
        self.cap_vcores = np.zeros(n, dtype=np.int64)
        self.alloc_mem = np.zeros(n, dtype=np.int64)
        self.alloc_vcores = np.zeros(n, dtype=np.int64)
        self.primary_cpu = np.zeros(n, dtype=np.float64)
        self.primary_mem = np.zeros(n, dtype=np.float64)
        self.container_cpu = np.zeros(n, dtype=np.float64)
        self.running = np.zeros(n, dtype=bool)
        self._on_node: list[dict[str, Container]] = []
        self.containers: dict[str, Container] = {}
        self._deadlines: list[_Deadline] = []
        self._generation = np.zeros(n, dtype=np.int64)  # per node: bumped by every capacity update
        self._seq = itertools.count(1)
        # nodes whose capacity, allocation or state changed since a caller last took them
        # (`track_changes` / `take_changes`: the simulator's incremental free capacity); None: untracked
        self.changed: list[int] | None = None
        self.changed_all = False
        self._scalars()

    # --- nodes ----------------------------------------------------------------------------

    def add_nodes(
        self,
        node_ids: Iterable[str],
        total: Resources,
        physical_cores: float,
        racks: Iterable[str] | None = None,
    ) -> np.ndarray:
        """Add RUNNING nodes of one shape; returns their indexes."""
        ids = list(node_ids)
        rack_list = list(racks) if racks is not None else ["/default-rack"] * len(ids)
        if len(rack_list) != len(ids):
            raise ValueError("one rack per node")
        if total.memory_mb <= 0 or total.vcores <= 0 or physical_cores <= 0:
            raise ValueError(f"a node needs positive resources, got {total} and {physical_cores} cores")
        start = len(self.node_ids)
        for i, nid in enumerate(ids):
            if nid in self._index:
                raise ValueError(f"duplicate node {nid}")
            self._index[nid] = start + i
        self.node_ids.extend(ids)
        self.racks.extend(rack_list)
        self.hostnames.extend(nid.rsplit(":", 1)[0] for nid in ids)
        k = len(ids)

        def grow(a: np.ndarray, value: float | int | bool) -> np.ndarray:
            return np.concatenate([a, np.full(k, value, dtype=a.dtype)])

        self.physical_cores = grow(self.physical_cores, physical_cores)
        self.total_mem = grow(self.total_mem, total.memory_mb)
        self.total_vcores = grow(self.total_vcores, total.vcores)
        self.cap_mem = grow(self.cap_mem, total.memory_mb)
        self.cap_vcores = grow(self.cap_vcores, total.vcores)
        self.alloc_mem = grow(self.alloc_mem, 0)
        self.alloc_vcores = grow(self.alloc_vcores, 0)
        self.primary_cpu = grow(self.primary_cpu, 0.0)
        self.primary_mem = grow(self.primary_mem, 0.0)
        self.container_cpu = grow(self.container_cpu, 0.0)
        self.running = grow(self.running, True)
        self._on_node.extend({} for _ in ids)
        self._generation = grow(self._generation, 0)
        self.changed_all = True
        self._scalars()
        return np.arange(start, start + k)

    def _scalars(self) -> None:
        """Memoryviews of the per-node columns a container start or end updates: one node's
        value as a Python number (same IEEE arithmetic, a fraction of a numpy scalar's cost)."""
        self.alloc_mem1, self.alloc_vcores1, self.container_cpu1 = (memoryview(self.alloc_mem), memoryview(self.alloc_vcores),
                                                  memoryview(self.container_cpu))

    def track_changes(self) -> None:
        """From now on, record the nodes whose capacity, allocation or running state changes."""
        self.changed, self.changed_all = [], True

    def take_changes(self) -> tuple[bool, list[int]]:
        """(every node may have changed, the nodes changed) since the last call; resets both."""
        if self.changed is None:
            return True, []
        out = (self.changed_all, self.changed)
        self.changed, self.changed_all = [], False
        return out

    def index(self, node_id: str) -> int:
        try:
            return self._index[node_id]
        except KeyError:
            raise KeyError(f"unknown node {node_id}") from None

    def __len__(self) -> int:
        return len(self.node_ids)

    def capacity(self, node: int) -> Resources:
        return Resources(int(self.cap_mem[node]), int(self.cap_vcores[node]))

    def total(self, node: int) -> Resources:
        return Resources(int(self.total_mem[node]), int(self.total_vcores[node]))

    def allocated(self, node: int) -> Resources:
        return Resources(int(self.alloc_mem[node]), int(self.alloc_vcores[node]))

    def available(self, node: int) -> Resources:
        """capacity − allocated; negative while a node runs over-committed (as the RM shows)."""
        return self.capacity(node) - self.allocated(node)

    def free_vcores(self) -> np.ndarray:
        """Vectorized capacity − allocated vcores of every node (0 for nodes not running)."""
        return np.where(self.running, self.cap_vcores - self.alloc_vcores, 0)

    def free_mem(self) -> np.ndarray:
        return np.where(self.running, self.cap_mem - self.alloc_mem, 0)

    def containers_on(self, node: int) -> list[Container]:
        return list(self._on_node[node].values())

    def container_counts(self) -> np.ndarray:
        """Running containers per node (int64 array)."""
        return np.fromiter((len(on) for on in self._on_node), dtype=np.int64, count=len(self._on_node))

    # --- primary tenants ------------------------------------------------------------------

    def set_primary_usage(self, cpu_cores: np.ndarray | float, mem_mb: np.ndarray | float | None = None, nodes: np.ndarray | slice | None = None) -> None:
        """Set the primary tenant's CPU (physical cores) and memory for all or some nodes."""
        where = slice(None) if nodes is None else nodes
        self.primary_cpu[where] = cpu_cores
        if mem_mb is not None:
            self.primary_mem[where] = mem_mb

    def utilization(self, node: int) -> NodeUtilization:
        cores = float(self.physical_cores[node])
        cont = float(self.container_cpu[node])
        mem = float(sum(c.memory_mb for c in self._on_node[node].values()))
        return NodeUtilization(
            node_cpu_cores=min(cores, float(self.primary_cpu[node]) + cont),
            containers_cpu_vcores=cont * float(self.total_vcores[node]) / cores,
            node_memory_mb=float(self.primary_mem[node]) + mem,
            containers_memory_mb=mem,
        )

    # --- containers -----------------------------------------------------------------------

    def fits(self, node: int, memory_mb: int, vcores: int) -> bool:
        return bool(
            self.running[node]
            and self.alloc_mem[node] + memory_mb <= self.cap_mem[node]
            and self.alloc_vcores[node] + vcores <= self.cap_vcores[node]
        )

    def allocate(
        self,
        container_id: str,
        app_id: str,
        node: int,
        resources: Resources,
        now: float,
        *,
        is_am: bool = False,
        priority: int = 0,
        cpu_cores: float = 0.0,
        force: bool = False,
    ) -> Container | None:
        """Start a container if it fits in the node's capacity (or `force`); None otherwise."""
        if container_id in self.containers:
            raise ValueError(f"duplicate container {container_id}")
        if not force and not self.fits(node, resources.memory_mb, resources.vcores):
            return None
        c = Container(container_id, app_id, node, resources.memory_mb, resources.vcores, now,
                      is_am, priority, cpu_cores, seq=next(self._seq))
        self.containers[container_id] = c
        self._on_node[node][container_id] = c
        if self.changed is not None:
            self.changed.append(node)
        self.alloc_mem[node] += c.memory_mb
        self.alloc_vcores[node] += c.vcores
        self.container_cpu[node] += c.cpu_cores
        return c

    def allocate_batch(
        self,
        container_ids: list[str],
        app_id: str,
        nodes: Iterable[int],
        resources: Resources,
        now: float,
        *,
        cpu_cores: float = 0.0,
    ) -> list[Container]:
        """Start many same-sized non-AM containers at once, without capacity checks (the caller
        placed them on free capacity): the simulator's fast path for `allocate(..., force=True)`.
        Raises on a duplicate id (before changing anything)."""
        node_list = [int(n) for n in nodes]
        if len(container_ids) != len(node_list):
            raise ValueError("one node per container id")
        containers, on_node, seq = self.containers, self._on_node, self._seq
        for cid in container_ids:
            if cid in containers:
                raise ValueError(f"duplicate container {cid}")
        mem, vc = resources.memory_mb, resources.vcores
        out: list[Container] = []
        per_node: dict[int, int] = {}
        for cid, node in zip(container_ids, node_list):
            c = Container(cid, app_id, node, mem, vc, now, False, 0, cpu_cores, None, None, next(seq))
            containers[cid] = on_node[node][cid] = c
            out.append(c)
            per_node[node] = per_node.get(node, 0) + 1
        if self.changed is not None:
            self.changed.extend(per_node)
        if len(per_node) <= 32:  # scalar updates beat fancy indexing for a handful of nodes
            mem_of, vc_of, cpu_of = self.alloc_mem1, self.alloc_vcores1, self.container_cpu1
            for node, k in per_node.items():
                mem_of[node] += k * mem
                vc_of[node] += k * vc
                cpu_of[node] += k * cpu_cores
        else:
            u = np.fromiter(per_node.keys(), np.int64, len(per_node))
            k_ = np.fromiter(per_node.values(), np.int64, len(per_node))
            self.alloc_mem[u] += k_ * mem
            self.alloc_vcores[u] += k_ * vc
            self.container_cpu[u] += k_ * cpu_cores
        return out

    def release(self, container_id: str, now: float, cause: EndCause) -> Container:
        """Stop a running container and free what it held; idempotent for ended ones."""
        c = self.containers[container_id]
        if c.ended_at is None:
            self._end(c, now, cause)
        return c

    def complete(self, c: Container, now: float) -> None:
        """`release(c, COMPLETED)` then `forget(c)` for a running container in hand: the
        simulator's path for a task end (one per task), without the id look-ups."""
        self._end(c, now, EndCause.COMPLETED)
        del self.containers[c.container_id]

    def _end(self, c: Container, now: float, cause: EndCause) -> None:
        """A running container ends: its node gets back what it held (one place for every end)."""
        node = c.node
        c.ended_at, c.end_cause = now, cause
        on = self._on_node[node]
        del on[c.container_id]
        if self.changed is not None:
            self.changed.append(node)
        self.alloc_mem1[node] -= c.memory_mb
        self.alloc_vcores1[node] -= c.vcores
        if on:
            self.container_cpu1[node] -= c.cpu_cores
        else:
            self.container_cpu1[node] = 0.0  # no float drift on an empty node

    def set_container_cpu(self, container_id: str, cpu_cores: float) -> None:
        """Change what a running container's task burns (e.g. once its process has started)."""
        c = self.containers[container_id]
        if c.ended_at is not None:
            return
        self.container_cpu[c.node] += cpu_cores - c.cpu_cores
        c.cpu_cores = cpu_cores

    def forget(self, container_id: str) -> None:
        """Drop an ended container from the index (the simulator does this to bound memory)."""
        c = self.containers.pop(container_id)
        if c.ended_at is None:
            raise ValueError(f"container {container_id} is still running")

    def youngest_first(self, node: int, *, include_am: bool = False) -> list[Container]:
        """Running containers of a node, youngest (latest start, then latest allocation) first."""
        cs = [c for c in self._on_node[node].values() if include_am or not c.is_am]
        cs.sort(key=lambda c: (c.started_at, c.seq), reverse=True)
        return cs

    def preempt_to_fit(self, node: int, limit: Resources, now: float, cause: EndCause) -> list[Container]:
        """Kill the youngest non-AM containers until the allocation fits in `limit`.

        Exactly enough: a container is killed only while memory OR vcores is still over
        (scenarios/overcommit-timeout: AM + four 1024 MB/1-vcore workers cut to 3072/3 lose the
        two youngest workers; a later vcores-only cut to 8192/2 of AM + two workers kills one).
        AMs are never killed here; if AMs alone exceed the limit the node stays over.
        """
        killed: list[Container] = []
        for c in self.youngest_first(node):
            if self.alloc_mem[node] <= limit.memory_mb and self.alloc_vcores[node] <= limit.vcores:
                break
            killed.append(self.release(c.container_id, now, cause))
        return killed

    # --- node resource update -------------------------------------------------------------

    def set_capacity(self, node: int, resources: Resources, now: float, overcommit_timeout_ms: int = -1) -> None:
        """A node resource update (POST /nodes/{id}/resource); kills happen in `advance`.

        The model refuses what a careful client must never send (the real RM accepts it and
        sets 0/0 or negative): negative values. Zero is allowed — it drains a node.
        """
        if resources.memory_mb < 0 or resources.vcores < 0:
            raise ValueError(f"negative capacity {resources} for {self.node_ids[node]}")
        if overcommit_timeout_ms < -1:
            raise ValueError(f"overCommitTimeout must be >= -1 ms, got {overcommit_timeout_ms}")
        self.cap_mem[node] = resources.memory_mb
        self.cap_vcores[node] = resources.vcores
        if self.changed is not None:
            self.changed.append(node)
        self._generation[node] += 1  # a newer update supersedes any pending deadline
        if overcommit_timeout_ms >= 0:
            due = now + overcommit_timeout_ms / 1000.0
            heapq.heappush(self._deadlines, _Deadline(due, next(self._seq), node, int(self._generation[node])))

    def set_capacities(
        self,
        nodes: np.ndarray,
        vcores: np.ndarray,
        memory_mb: np.ndarray,
        now: float,
        overcommit_timeout_ms: int = -1,
    ) -> None:
        """Vectorized `set_capacity` for many nodes at once (the simulator's per-step update).

        Same semantics as calling `set_capacity` on each node: values must be >= 0, every
        update supersedes the node's pending deadline, and with a timeout >= 0 the youngest
        non-AM containers are killed in `advance` once it has passed. A deadline is queued only
        for nodes over-committed right now: on the others it would find the allocation already
        fitting (allocations never exceed capacity unless forced), so skipping it changes nothing.
        """
        nodes = np.asarray(nodes, dtype=np.int64)
        vc = np.asarray(vcores, dtype=np.int64)
        mem = np.asarray(memory_mb, dtype=np.int64)
        if (vc < 0).any() or (mem < 0).any():
            raise ValueError("negative capacity in a bulk update")
        if overcommit_timeout_ms < -1:
            raise ValueError(f"overCommitTimeout must be >= -1 ms, got {overcommit_timeout_ms}")
        self.cap_vcores[nodes] = vc
        self.cap_mem[nodes] = mem
        self.changed_all = True
        self._generation[nodes] += 1
        if overcommit_timeout_ms >= 0:
            over = nodes[(self.alloc_vcores[nodes] > self.cap_vcores[nodes]) | (self.alloc_mem[nodes] > self.cap_mem[nodes])]
            due = now + overcommit_timeout_ms / 1000.0
            for node in over.tolist():
                heapq.heappush(self._deadlines, _Deadline(due, next(self._seq), node, int(self._generation[node])))

    def restore_node(self, node: int, now: float) -> None:
        """A removed node comes back empty (e.g. after a disk reimage) with its configured capacity."""
        if self.running[node]:
            raise ValueError(f"node {self.node_ids[node]} is already running")
        self.running[node] = True
        self.set_capacity(node, self.total(node), now)

    def next_due(self) -> float | None:
        """Time of the earliest pending over-commit deadline, if any."""
        while self._deadlines and self._deadlines[0].generation != self._generation[self._deadlines[0].node]:
            heapq.heappop(self._deadlines)
        return self._deadlines[0].due if self._deadlines else None

    def advance(self, now: float) -> list[Container]:
        """Apply every over-commit deadline due by `now`; returns the containers killed."""
        killed: list[Container] = []
        while self._deadlines and self._deadlines[0].due <= now:
            d = heapq.heappop(self._deadlines)
            if d.generation != self._generation[d.node]:
                continue
            killed += self.preempt_to_fit(d.node, self.capacity(d.node), now, EndCause.RM_OVERCOMMIT)
        return killed

    def remove_node(self, node: int, now: float) -> list[Container]:
        """The node leaves (lost/decommissioned): its containers end, nothing more is placed."""
        ended = [self.release(cid, now, EndCause.NODE_LOST) for cid in list(self._on_node[node])]
        self.running[node] = False
        if self.changed is not None:
            self.changed.append(node)
        return ended

    def running_containers(self) -> Iterator[Container]:
        for on in self._on_node:
            yield from on.values()
