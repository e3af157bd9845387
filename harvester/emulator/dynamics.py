"""Timing of the emulated RM and NodeManagers (fixtures/yarn-3.3.6/scenarios).

Recorded behaviour this module turns into numbers:

- NM heartbeat every 1 s; each node has its own phase. Container signals and over-commit
  kills with a positive timeout take effect at the node's next heartbeat
  (signal-and-kill: SIGTERM 0.94 s / SIGKILL 0.34 s after the POST; overcommit-timeout:
  T=20 000 ms killed 20.96 s after the POST). A timeout of 0 kills at once (~40 ms).
- Utilization: each NM samples every 3 s (its own phase), a sample is the average over the
  last 3 s, and the RM shows it after the NM's next heartbeat; so a load change appears 2-7 s
  late and in steps (cpu-burn). `nodeCPUUsage` is the whole host in physical cores (NMs on
  the same host report the same), `containersCPUUsage` is vcores = cores x vcores/cores.
- The NM lists a finished container as DONE for ~2 s before dropping it.
- After an RM kill the node's `usedResource` keeps the container until the NM reports the
  exit (next heartbeats, ~1-2 s), while the app's view drops it at once.

Deferred work sits in an `EventQueue` (a heap of timed callbacks); the emulator drains it in
time order, interleaved with 1 s ticks, whenever it catches up to its clock.
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
    """Delays of the emulated cluster, in seconds (defaults: the recorded 3.3.6 cluster)."""

    heartbeat_s: float = 1.0
    sample_period_s: float = 3.0
    am_launch_s: float = 0.45          # allocation -> AM launched (startedTime -> launchTime)
    am_register_s: float = 2.4         # AM launched -> registered (app RUNNING)
    am_first_ask_s: float = 1.0        # registered -> its container asks reach the RM (AM heartbeat)
    worker_launch_s: float = 0.5       # allocated -> running; the NM shows it LOCALIZING meanwhile
    rm_kill_delay_s: float = 0.04      # overCommitTimeout=0: "within ~40 ms"
    signal_exit_s: float = 0.005       # SIGTERM/SIGKILL -> exit seen by the RM (6-11 ms)
    nm_done_retention_s: float = 2.0   # a DONE container stays in the NM's list
    node_used_lag_s: float = 1.5       # RM-killed containers still counted in node usedResource
    am_finish_s: float = 0.5           # last worker done -> app finished


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
    """The first heartbeat strictly after `now` of a node beating at `phase` (mod period)."""
    k = math.floor((now - phase) / period) + 1
    return phase + k * period


class UtilizationSampler:
    """What each NM last reported, sampled on the global 1 s tick (vectorized over nodes).

    At every tick the instantaneous host CPU and containers' CPU are accumulated; a node
    whose 3-s sample falls on this tick closes its window (the average of the accumulated
    ticks) and the RM sees that sample from the next tick on. Memory is sampled, not averaged.
    """

    def __init__(self) -> None:
        self.phase = np.zeros(0, dtype=np.int64)
        self._acc_node = np.zeros(0)
        self._acc_cont = np.zeros(0)
        self._acc_n = np.zeros(0, dtype=np.int64)
        self._pending = np.zeros((0, 5))
        self._pending_mask = np.zeros(0, dtype=bool)
        self.reported = np.zeros((0, 5))  # node cpu cores, containers vcores, node mem, cont mem, cont vmem
        self.version = 0                  # bumps whenever `reported` changes (render cache key)
        self.published = np.zeros(0, dtype=bool)  # nodes whose report changed at the last tick

    def grow(self, k: int, base_mem: np.ndarray, rng: np.random.Generator) -> None:
        self.phase = np.concatenate([self.phase, rng.integers(0, 3, size=k)])
        self._acc_node = np.concatenate([self._acc_node, np.zeros(k)])
        self._acc_cont = np.concatenate([self._acc_cont, np.zeros(k)])
        self._acc_n = np.concatenate([self._acc_n, np.zeros(k, dtype=np.int64)])
        self._pending = np.concatenate([self._pending, np.zeros((k, 5))])
        self._pending_mask = np.concatenate([self._pending_mask, np.zeros(k, dtype=bool)])
        first = np.zeros((k, 5))
        first[:, 2] = base_mem
        self.reported = np.concatenate([self.reported, first])
        self.version += 1

    def tick(self, k: int, node_cpu: np.ndarray, cont_vcores: np.ndarray, node_mem: np.ndarray,
             cont_mem: np.ndarray, cont_vmem: np.ndarray) -> None:
        """Global tick number `k`: publish last tick's samples, then accumulate and sample."""
        self.published = self._pending_mask.copy()
        if self._pending_mask.any():
            self.reported[self._pending_mask] = self._pending[self._pending_mask]
            self._pending_mask[:] = False
            self.version += 1
        self._acc_node += node_cpu
        self._acc_cont += cont_vcores
        self._acc_n += 1
        due = self.phase == (k % 3)
        if due.any():
            n = np.maximum(self._acc_n[due], 1)
            self._pending[due, 0] = self._acc_node[due] / n
            self._pending[due, 1] = self._acc_cont[due] / n
            self._pending[due, 2] = node_mem[due]
            self._pending[due, 3] = cont_mem[due]
            self._pending[due, 4] = cont_vmem[due]
            self._pending_mask |= due
            self._acc_node[due] = 0.0
            self._acc_cont[due] = 0.0
            self._acc_n[due] = 0
