"""Clocks of the emulated RM and NodeManagers (fixtures/yarn-3.3.6/scenarios).

Three kinds of clocks drive everything; the emulator holds no per-scenario delay:

- Each NodeManager heartbeats every `heartbeat_s` (yarn.resourcemanager.nodemanagers.
  heartbeat-interval-ms, 1 s) at its own phase (seeded; tests may pin one). At a heartbeat the
  RM allocates (one container per node heartbeat, as the RM logs show), delivers queued
  container signals, hears of containers the RM killed and shows the NM's latest utilization
  sample. So a signal takes effect up to 1 s after its POST (signal-and-kill: SIGTERM 0.94 s /
  SIGKILL 0.34 s after), and a positive overCommitTimeout kills at the first heartbeat after it
  (overcommit-timeout: T=20 000 ms killed 20.96 s after the POST).
- Each NM's resource monitor samples every `monitor_interval_s` (yarn.nodemanager.resource-
  monitor.interval-ms, 3 s) at its own phase; a sample is the average over the interval and the
  RM shows it from the NM's next heartbeat on, so a load change appears 2-7 s late and in steps
  (cpu-burn, cpu-contention). The emulated monitor integrates usage on a `monitor_grid_s` grid
  (1 s; a long emulated run, the whatif validation's week, may take a coarser grid with a monitor
  interval that is a multiple of it: the primary patterns are then read once per grid point).
- The reservation plan follower runs every `plan_step_s`
  (yarn.resourcemanager.reservation-system.planfollower.time-step, 1 s) at its own phase and
  rounds "now" UP to the step (AbstractSchedulerPlanFollower), so a reservation queue appears up
  to 1 s before its window (recurring-reservation: 0.47 s early).

Two NodeManager delays are properties of the NM and the container process, not of a scenario:
`container_start_s` (start request -> process running; the AM's launchTime is 0.18 s after its
startedTime in captures/apps-id-reservation-queue-root-default-default-after-10s) and
`process_exit_s` (a signalled `sleep` exits and the NM reports it out of band: the RM saw the
container COMPLETED 6-11 ms after the signal, signal-and-kill).

Deferred work sits in an `EventQueue` (a heap of timed callbacks) that the emulator drains in
time order whenever it catches up to its clock.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True, slots=True)
class Timing:
    """The cluster's configured intervals and NM process delays, in seconds (see module doc)."""

    heartbeat_s: float = 1.0
    monitor_interval_s: float = 3.0
    monitor_grid_s: float = 1.0
    plan_step_s: float = 1.0
    container_start_s: float = 0.2
    process_exit_s: float = 0.01


class EventQueue:
    """Timed callbacks in (time, insertion) order; cancellation by token."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[float], None]]] = []
        self._seq = itertools.count()
        self._cancelled: set[int] = set()

    def at(self, t: float, fn: Callable[[float], None]) -> int:
        token = next(self._seq)
        heapq.heappush(self._heap, (t, token, fn))
        return token

    def cancel(self, token: int) -> None:
        self._cancelled.add(token)

    def peek(self) -> float:
        while self._heap and self._heap[0][1] in self._cancelled:
            self._cancelled.discard(heapq.heappop(self._heap)[1])
        return self._heap[0][0] if self._heap else math.inf

    def pop(self) -> tuple[float, Callable[[float], None]]:
        self.peek()
        t, _, fn = heapq.heappop(self._heap)
        return t, fn

    def __len__(self) -> int:
        return len(self._heap) - len(self._cancelled)


def next_heartbeat(now: float, phase: float, period: float = 1.0) -> float:
    """The first beat strictly after `now` of a clock beating at `phase` (mod period)."""
    k = math.floor((now - phase) / period) + 1
    return phase + k * period


def next_beats(now: float | np.ndarray, phases: np.ndarray, period: float = 1.0) -> np.ndarray:
    """Vectorized `next_heartbeat` for many clocks (`now` one time or one per clock)."""
    return phases + (np.floor((now - phases) / period) + 1) * period


class UtilizationSampler:
    """What each NM last reported, vectorized over nodes.

    The monitor accumulates the instantaneous host and containers' CPU on the grid; a node
    whose sample falls due closes its window (the average over it) and the RM shows that sample
    from the node's next heartbeat (`publish_at`) on. Memory is sampled, not averaged.
    """

    def __init__(self, grid_per_sample: int = 3) -> None:
        self.grid = grid_per_sample
        self.phase = np.zeros(0, dtype=np.int64)
        self._acc_node = np.zeros(0)
        self._acc_cont = np.zeros(0)
        self._acc_n = np.zeros(0, dtype=np.int64)
        self._pending = np.zeros((0, 5))
        self.publish_at = np.zeros(0)     # inf = nothing pending
        self.reported = np.zeros((0, 5))  # node cpu cores, containers vcores, node mem, cont mem, cont vmem
        self.version = 0                  # bumps whenever `reported` changes (render cache key)

    def grow(self, k: int, base_mem: np.ndarray, rng: np.random.Generator) -> None:
        self.phase = np.concatenate([self.phase, rng.integers(0, self.grid, size=k)])
        self._acc_node = np.concatenate([self._acc_node, np.zeros(k)])
        self._acc_cont = np.concatenate([self._acc_cont, np.zeros(k)])
        self._acc_n = np.concatenate([self._acc_n, np.zeros(k, dtype=np.int64)])
        self._pending = np.concatenate([self._pending, np.zeros((k, 5))])
        self.publish_at = np.concatenate([self.publish_at, np.full(k, np.inf)])
        first = np.zeros((k, 5))
        first[:, 2] = base_mem
        self.reported = np.concatenate([self.reported, first])
        self.version += 1

    def sample(self, k: int, node_cpu: np.ndarray, cont_vcores: np.ndarray, node_mem: np.ndarray,
               cont_mem: np.ndarray, cont_vmem: np.ndarray, beats: np.ndarray) -> None:
        """Grid point `k` (time / monitor_grid_s): accumulate; nodes due close their window, to
        be shown at their next heartbeat `beats` (one per node)."""
        self._acc_node += node_cpu
        self._acc_cont += cont_vcores
        self._acc_n += 1
        due = self.phase == (k % self.grid)
        if not due.any():
            return
        n = np.maximum(self._acc_n[due], 1)
        self._pending[due, 0] = self._acc_node[due] / n
        self._pending[due, 1] = self._acc_cont[due] / n
        self._pending[due, 2] = node_mem[due]
        self._pending[due, 3] = cont_mem[due]
        self._pending[due, 4] = cont_vmem[due]
        self.publish_at[due] = beats[due]
        self._acc_node[due] = 0.0
        self._acc_cont[due] = 0.0
        self._acc_n[due] = 0

    def publish(self, now: float) -> np.ndarray:
        """Show every sample whose heartbeat has come; returns the nodes that changed."""
        ready = self.publish_at <= now
        if not ready.any():
            return np.zeros(0, dtype=np.int64)
        self.reported[ready] = self._pending[ready]
        self.publish_at[ready] = np.inf
        self.version += 1
        return np.flatnonzero(ready)
