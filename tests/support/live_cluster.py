"""What the live suites (tests/integration) decide from the cluster they find, as functions of
rm_client answers and of Harvester's records: so that they are unit-tested here against the
emulator and the recorded 3.3.6 captures (tests/contract/test_live_cluster_helpers.py) while the
live suites themselves skip without a cluster.

A live cluster is small, used and shared: its queue layout is not ours (the reservable queue is
found, or named by HARVESTER_TEST_PLAN_QUEUE), other tenants hold containers and reservations,
and its NodeManagers may be small. Nothing here assumes an empty cluster or exact counts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rm_client import App, ReservationInfo, Resource, RMClient
from rm_client.wire.scheduler import Queue, SchedulerInfo, iter_queues

PLAN_QUEUE_VAR = "HARVESTER_TEST_PLAN_QUEUE"
QUEUE_VAR = "HARVESTER_TEST_QUEUE"


# --- queues -----------------------------------------------------------------------------------

def _is_plan(q: Queue) -> bool:
    """A reservable queue: the RM hides its reservation queues, or it has its `-default` child."""
    return bool(q.hide_reservation_queues) or any(c.name.endswith(f"{q.name}-default") for c in q.children)


def plan_queue(scheduler: SchedulerInfo, wanted: str | None = None) -> Queue | None:
    """The reservable queue to use: `wanted` (a full path such as root.plan) when it is one,
    else the first reservable queue in the tree; None when there is none."""
    if scheduler.root is None:
        return None
    plans = [q for _, q in iter_queues(scheduler.root) if q.kind != "root" and _is_plan(q)]
    if wanted:
        return next((q for q in plans if q.path == wanted), None)
    return plans[0] if plans else None


def submit_queue(scheduler: SchedulerInfo, wanted: str | None = None) -> str | None:
    """A queue a plain app can be submitted to, by full path: `wanted`; else root.default when it
    exists (a plan queue's apps run in its -default child); else the first leaf that is not a
    reservation's or a plan's own -default child; None when the tree has none."""
    if wanted:
        return wanted
    if scheduler.root is None:
        return None
    queues = [q for _, q in iter_queues(scheduler.root) if q.kind != "root"]
    paths = {q.path for q in queues}
    if "root.default" in paths:
        return "root.default"
    plans = [q for q in queues if _is_plan(q)]
    for q in queues:
        if q.kind == "leaf" and not q.is_reservation_queue and not any(q in p.children for p in plans):
            return q.path
    return plans[0].path if plans else None


def queue_capacity(q: Queue) -> Resource | None:
    """The queue's effective capacity now (minEffectiveCapacity: its share of the cluster)."""
    if q.min_effective_capacity is not None:
        return q.min_effective_capacity
    for part in q.capacities:
        if part.partition_name == "" and part.effective_min_resource is not None:
            return part.effective_min_resource
    return None


def env_plan_queue() -> str | None:
    return os.environ.get(PLAN_QUEUE_VAR) or None


def env_submit_queue() -> str | None:
    return os.environ.get(QUEUE_VAR) or None


# --- apps ---------------------------------------------------------------------------------------

def find_apps(client: RMClient, *, name: str, application_type: str, started_since_ms: int) -> tuple[App, ...]:
    """Apps of this name and type started since `started_since_ms`, from the RM itself
    (GET /ws/v1/cluster/apps?name=&applicationTypes=&startedTimeBegin=) instead of a client's log
    line, whose presence depends on the client's log level. Filtered again here by name and type:
    the answer is what decides, whatever filters the RM applied."""
    apps = client.list_apps(name=name, application_types=(application_type,), started_time_begin_ms=started_since_ms)
    return tuple(a for a in apps if a.name == name and a.application_type.upper() == application_type.upper()
                 and a.started_time_ms >= started_since_ms)


# --- reservations -------------------------------------------------------------------------------

def recurring_allocation_problems(info: ReservationInfo, *, window_ms: int) -> list[str]:
    """What is wrong with a recurring reservation's listed allocations, as 3.3.6 lists them:
    offsets within [0, period]; zero-resource ranges are gaps (`ResourceAllocation.holds`: the list
    shows the time between held ranges at <0, 0>), whatever their length; the ranges
    that hold resources lie in the period, never overlap, and together last no longer than the
    arrival..deadline window."""
    period = info.definition.recurrence_period_ms
    allocs = info.allocations or ()
    out: list[str] = []
    if period <= 0:
        return [f"not recurring (recurrence {period})"]
    held = sorted((a for a in allocs if a.holds), key=lambda a: a.start_ms)
    if not held:
        out.append(f"no allocation holds resources: {allocs}")
    for a in allocs:
        if not 0 <= a.start_ms < a.end_ms <= period:
            out.append(f"[{a.start_ms}, {a.end_ms}) is not an offset range within the period {period}")
    for a, b in zip(held, held[1:]):
        if b.start_ms < a.end_ms:
            out.append(f"held ranges [{a.start_ms}, {a.end_ms}) and [{b.start_ms}, {b.end_ms}) overlap")
    total = sum(a.end_ms - a.start_ms for a in held)
    if total > window_ms:
        out.append(f"held ranges last {total} ms in all, longer than the window {window_ms} ms")
    return out


# --- Jockey's live job, sized from the plan it finds ----------------------------------------------

@dataclass(frozen=True, slots=True)
class JockeySizing:
    """The live Jockey test's job and reservation for a plan: `maps` tasks of `map_s` seconds
    (history), a `deadline_s` deadline, a reservation of `initial` containers of `container`."""

    maps: int
    map_s: float
    deadline_s: float
    container: Resource
    initial: int = 1


def jockey_sizing(plan: Resource, *, share: float = 0.5, most_maps: int = 6, work_s: float = 180.0,
                  deadline_s: float = 120.0, step_mb: int = 128, most_mb: int = 1024) -> JockeySizing | str:
    """Size the job so that its largest raise (one container per task: Jockey never asks for more
    than the tasks, its demand cap) takes at most `share` of the plan queue's effective capacity
    (the rest is other users' and the plan's own headroom): one-vcore containers, as many tasks as
    the share's vcores allow (at most `most_maps`), the same total work `work_s` split over them,
    memory per container what the share holds over the tasks, in `step_mb` steps, at most
    `most_mb`. The deadline asks for more than one container at the start (total work over the
    deadline > 1), so the raise from `initial` = 1 happens on any plan. A reason (str) when the
    plan is too small for a 3-task job."""
    vcores = math.floor(plan.vcores * share)
    maps = min(most_maps, vcores)
    if maps < 3:
        return (f"the plan's effective capacity <{plan.memory_mb} MB, {plan.vcores} vcores> leaves {vcores} vcores at "
                f"{share:.0%}: the Jockey job needs 3 one-vcore containers")
    mem = min(most_mb, math.floor(plan.memory_mb * share / maps / step_mb) * step_mb)
    if mem < step_mb:
        return (f"the plan's effective capacity <{plan.memory_mb} MB, {plan.vcores} vcores> leaves less than "
                f"{step_mb} MB per container for {maps} containers at {share:.0%}")
    return JockeySizing(maps, work_s / maps, deadline_s, Resource(mem, 1))


# --- the guard's overCommitTimeout, checked against what it saw -------------------------------------

def guard_timeout_problems(records: Iterable[Any], configured_ms: int) -> list[str]:
    """Every capacity update the guard sent, against its own view of the node at that tick
    (DecisionRecord.inputs: `outcome`, `overcommit_timeout_ms`): a cut BELOW the allocation
    ("sent:cut") carries the configured overCommitTimeout, so that the RM kills what no longer
    fits; any other update (an increase, a decrease that still holds the allocation) carries -1,
    so that the RM kills nothing. ("sent:freeze" may be either: a freeze may or may not cut.)"""
    out = []
    for r in records:
        if r.loop != "guard" or r.kind != "set_capacity" or r.fate != "sent":
            continue
        inputs: Mapping[str, Any] = r.inputs
        outcome, t = inputs.get("outcome"), inputs.get("overcommit_timeout_ms")
        if outcome == "sent:cut" and t != configured_ms:
            out.append(f"{r.target} at {r.at:.0f}: a cut below the allocation sent with overCommitTimeout={t}, "
                       f"not {configured_ms}")
        elif outcome not in ("sent:cut", "sent:freeze") and t != -1:
            out.append(f"{r.target} at {r.at:.0f}: {outcome} (holds the allocation) sent with overCommitTimeout={t}, "
                       "not -1")
    return out


def cut_nodes(records: Iterable[Any]) -> set[str]:
    """Nodes the guard sent an update with overCommitTimeout >= 0 (the RM then kills to fit)."""
    return {r.target for r in records if r.loop == "guard" and r.kind == "set_capacity" and r.fate == "sent"
            and int(r.inputs.get("overcommit_timeout_ms", -1)) >= 0}
