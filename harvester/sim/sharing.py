"""CPU sharing on an oversubscribed server, and the batch progress clocks it drives (pure + state).

When the primary tenant and the batch containers of a server want more cores than it has, a
real host does not kill anything: it shares the cores and everyone slows down. Recorded on a
real 2-core host (fixtures scenarios/cpu-contention; the emulator's `harvester/emulator/
contention.py` reproduces it per process): with no cgroup CPU limits, Linux CFS gives every
runnable process the same share, and YARN containers have no priority over outside processes.
With busy processes of one core each, that is a fluid share proportional to the cores each
side wants. A latency-critical primary usually runs at a higher priority or cgroup weight, so
the weight of the primary's demand is a parameter:

    P = primary cores wanted, B = batch cores wanted (Σ running containers), C = cores
    P + B ≤ C:  both get what they want (batch speed 1)
    otherwise:  primary gets  xp = min(P, max(C·wP / (wP + B), C − B))
                batch gets    xb = min(B, C − xp),  batch speed = xb / B
    w = 1: the recorded per-process sharing (the default); w = None: strict priority (the
    primary first, batch gets only the leftover cores).

`P − xp` is primary demand not served (harm to the primary), `B − xb` batch work slowed away.

`NodeClocks` turns speeds into task finish times (processor sharing): every node has a batch
progress clock that advances at the node's speed; a task needing `d` full-speed seconds
started at clock value v ends when the clock reads v + d. A change of speed moves one clock,
not every task: only the node's earliest finish is rescheduled.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

EPS = 1e-9


def share(primary: np.ndarray, batch: np.ndarray, cores: np.ndarray, weight: float | None
          ) -> tuple[np.ndarray, np.ndarray]:
    """(cores the primary gets, cores the batch gets) per node (module docstring)."""
    over = primary + batch > cores + EPS
    if weight is None:
        xp = np.minimum(primary, cores)
    else:
        wp = weight * primary
        with np.errstate(divide="ignore", invalid="ignore"):
            prop = np.where(wp + batch > 0, cores * wp / (wp + batch), 0.0)
        xp = np.minimum(primary, np.maximum(prop, cores - batch))
    xp = np.where(over, np.maximum(xp, 0.0), primary)
    xb = np.where(over, np.clip(cores - xp, 0.0, batch), batch)
    return xp, xb


def share_one(primary: float, batch: float, cores: float, weight: float | None) -> tuple[float, float]:
    """`share` for one node in Python floats (same operations in the same order: same bits)."""
    if not primary + batch > cores + EPS:
        return primary, batch
    if weight is None:
        xp = min(primary, cores)
    else:
        wp = weight * primary
        prop = cores * wp / (wp + batch) if wp + batch > 0 else 0.0
        xp = min(primary, max(prop, cores - batch))
    xp = max(xp, 0.0)
    return xp, min(max(cores - xp, 0.0), batch)


class NodeClocks:
    """Per-node batch progress clocks and the tasks waiting to finish on each (module docstring).

    Items pushed are opaque to the clocks; `alive(item)` says whether one still runs (killed
    tasks are dropped lazily when they reach the top of their node's heap).
    """

    def __init__(self, n: int) -> None:
        self.speed = np.ones(n)
        self.clock = np.zeros(n)     # progress clock value at `since`
        self.since = np.zeros(n)
        # the same buffers for one node at a time: Python floats in and out, no numpy scalars
        self.speed1, self.clock1, self.since1 = memoryview(self.speed), memoryview(self.clock), memoryview(self.since)
        # real time of the node's next finish, and of the node's one armed finish event in the
        # engine queue (inf: none); a finish that moves later does not queue another event: the
        # armed one re-arms when it comes up. Python lists: only ever read one node at a time
        self.next_at: list[float] = [math.inf] * n
        self.queued: list[float] = [math.inf] * n
        self._heaps: list[list[tuple[float, int, Any]]] = [[] for _ in range(n)]
        self._seq = 0

    def read(self, node: int, now: float) -> float:
        """The node's progress clock at `now`."""
        # Python floats: the same IEEE operations as on numpy scalars, without their overhead
        return self.clock1[node] + self.speed1[node] * (now - self.since1[node])

    def add(self, node: int, now: float, work_s: float, item: Any) -> float:
        """Start `item` needing `work_s` full-speed seconds; returns its clock value at start."""
        start = self.clock1[node] + self.speed1[node] * (now - self.since1[node])  # read(node, now): one per task
        self._seq += 1
        heapq.heappush(self._heaps[node], (start + work_s, self._seq, item))
        return start

    def set_speeds(self, nodes: np.ndarray, speeds: np.ndarray, now: float) -> np.ndarray:
        """New speeds from `now` on; returns the nodes whose speed changed (clocks caught up)."""
        changed = np.abs(self.speed[nodes] - speeds) > 1e-12
        idx = nodes[changed]
        if idx.size:
            self.clock[idx] += self.speed[idx] * (now - self.since[idx])
            self.since[idx] = now
            self.speed[idx] = speeds[changed]
        return idx

    def set_speed(self, node: int, speed: float, now: float) -> bool:
        """`set_speeds` for one node; True if its speed changed (its clock caught up)."""
        old = self.speed1[node]
        if not abs(old - speed) > 1e-12:
            return False
        self.clock1[node] += old * (now - self.since1[node])
        self.since1[node] = now
        self.speed1[node] = speed
        return True

    def next_finish(self, node: int, now: float, alive: Any) -> float:
        """Real time the node's earliest live task ends (inf: none, or the node is stalled)."""
        heap = self._heaps[node]
        while heap and not alive(heap[0][2]):
            heapq.heappop(heap)
        if not heap:
            return float("inf")
        s = self.speed1[node]
        if s <= EPS:
            return float("inf")
        left = heap[0][0] - (self.clock1[node] + s * (now - self.since1[node]))  # read(node, now)
        return now + max(0.0, left) / s

    def next_finishes(self, nodes: np.ndarray, now: float, alive: Any) -> np.ndarray:
        """`next_finish` of many nodes: the heaps' tops in Python, the arithmetic in numpy (the
        same operations in the same order: the same bits; a primary step moves thousands of
        nodes' speeds, and one call per node was most of the step)."""
        heaps, pop, inf = self._heaps, heapq.heappop, math.inf
        tops: list[float] = []
        for node in nodes.tolist():
            heap = heaps[node]
            while heap and not alive(heap[0][2]):
                pop(heap)
            tops.append(heap[0][0] if heap else inf)
        s = self.speed[nodes]
        left = np.array(tops) - (self.clock[nodes] + s * (now - self.since[nodes]))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = now + np.maximum(0.0, left) / s
        return np.where(s <= EPS, inf, t)

    def due(self, node: int, now: float, alive: Any) -> list[Any]:
        """Pop every live task whose work is done by `now`."""
        heap, out, pop = self._heaps[node], [], heapq.heappop
        # read(node, now) + 1e-6, inline: one call per task end
        v = self.clock1[node] + self.speed1[node] * (now - self.since1[node]) + 1e-6
        while heap:
            item = heap[0][2]
            if alive(item):
                if heap[0][0] > v:
                    break
                out.append(item)
            pop(heap)
        return out

    def clear(self, node: int) -> None:
        self._heaps[node].clear()
        self.next_at[node] = math.inf
