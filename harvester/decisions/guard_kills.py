"""Who the guard kills on one node, and down to what — pure (decisions/guard.py's kill half).

When to kill (`harvesting.guard.kill_when`):
- `reserve_exhausted` (default): the reserve exists to absorb the primary's rise while the guard
  reacts (OSDI'16 §2). A rise the reserve absorbs kills nothing: the capacity is lowered to the
  allocation (no new work lands) and the reserve refills as tasks end. Only when the primary
  needs cores the batch holds — allocation > ⌊(cores − primary) × vcores per core⌋, or memory
  likewise — is the node cut to that LIMIT, exactly enough.
- `reserve_used`: kill as soon as the allocation no longer fits the target (cores − primary −
  reserve), restoring the whole reserve at once (the guard's behaviour before issue 16).
The limit is computed with the capacity formula over all nodes at once (decisions/guard.py
`_Formula`); `plan_kills` runs only for a node whose allocation exceeds it or that has kills in
flight — every other node's plan is the quiet one (no kill, floor per `floor_is_allocation`).

ApplicationMasters. A real 3.3.6 RM picks overcommit victims with AMs LAST, not never
(SchedulerNode.getContainersToKill orders by isAMContainer, then OPPORTUNISTIC first, then
youngest): on an idle test host cut to 0 vcores it preempted the distributed-shell AM
(numAMContainerPreempted 2). Losing an AM loses the job's progress, so with `am_floor` (default)
a cut never goes below the allocation of the AMs on the node (known from the RM's apps list,
masterNodeId + amUsed, without listing containers): the RM then takes only non-AM containers.
An AM is taken only as a LAST RESORT, when (1) no non-AM container is left on the node, (2) the
AMs alone hold more than the primary leaves, and (3) the containers' measured CPU — the AMs'
own, nothing else runs — is at least the node's reserve: the AMs really compete with the
primary. An idle AM (a sleeping distributed-shell AM burns ~0.02 cores) is never taken. Each
such decision is counted (`harvester_harvest_am_kills_total{reason}`) and its reason logged.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

from harvester.decisions.arbiter import ZERO, lower
from harvester.decisions.kills import KillPhase, KillRecord
from harvester.decisions.strategy import GuardStrategy, KillMechanism, NodeStrategy
from harvester.domain import ContainerInfo, KillContainer, NodeSample, Resources


class KillPlan(NamedTuple):
    kills: tuple[KillContainer, ...]
    floor: Resources          # allocation that stays after this decision's kills
    timeout: int              # overCommitTimeout of a cut
    note: str
    cut_to: Resources | None  # capacity to push when the node must shed containers (None: the target)
    am_kill: str = ""         # the last resort's reason when an AM is taken


def cut_timeout(s: GuardStrategy) -> int:
    """overCommitTimeout of a cut (ms; -1: the RM never kills) for the kill mechanism."""
    if s.kill_mechanism is KillMechanism.SIGNALS:
        return -1
    return s.backstop_timeout_ms if s.kill_mechanism is KillMechanism.SIGNALS_WITH_BACKSTOP else s.overcommit_timeout_ms


def floor_is_allocation(s: GuardStrategy) -> bool:
    """The floor of a node that sheds nothing and has no kill in flight: its whole allocation, or
    (a cut the RM may enforce: signals with a backstop) only the AMs' (`plan_kills`'s quiet case)."""
    return s.kill_mechanism is KillMechanism.RM_OVERCOMMIT or cut_timeout(s) < 0


def _last_resort(ns: NodeStrategy, sample: NodeSample, ams: Resources, remaining: Resources, limit: Resources,
                 reserve_cores: float) -> str:
    """Why an AM must go (module docstring), or "" when it must not."""
    if ams == ZERO or ams.fits_in(limit) or not remaining.fits_in(ams):
        return ""
    scale = max(ns.capacity.vcores, sample.total.vcores)
    burning = (sample.containers_cpu_vcores or 0.0) * ns.physical_cores / scale if scale > 0 else 0.0
    if burning < max(reserve_cores, 1e-9):
        return ""
    return (f"primary_short: only ApplicationMasters left <{ams.memory_mb} MB, {ams.vcores} vc> > what the primary "
            f"leaves <{limit.memory_mb} MB, {limit.vcores} vc> and they burn {burning:.2f} cores ≥ reserve "
            f"{reserve_cores:.2f}")


def plan_kills(s: GuardStrategy, now: float, stimulus_id: str, kills_in_flight: Mapping[str, KillRecord],
               ns: NodeStrategy, sample: NodeSample, target: Resources, limit: Resources, reserve_cores: float,
               containers: list[ContainerInfo], ams: Resources, containers_known: bool) -> KillPlan:
    """The node's kills and the floor of its capacity (module docstring)."""
    allocated = sample.used
    timeout = cut_timeout(s)
    am_floor = ams if s.am_floor else ZERO
    if s.kill_mechanism is KillMechanism.RM_OVERCOMMIT:
        if allocated.memory_mb <= limit.memory_mb and allocated.vcores <= limit.vcores:
            return KillPlan((), allocated, timeout, "", None)
        why = _last_resort(ns, sample, ams, allocated, limit, reserve_cores)
        floor = ZERO if why else am_floor
        what = "containers, AMs last" if why else ("non-AM containers (capacity floored at the AMs' allocation)"
                                                  if s.am_floor and ams != ZERO else "non-AM containers first")
        return KillPlan((), floor, timeout, (
            f"allocated <{allocated.memory_mb} MB, {allocated.vcores} vc> > <{limit.memory_mb} MB, {limit.vcores} vc> "
            f"the primary leaves: the RM kills the youngest {what}, exactly enough, {timeout} ms after the update"
            + (f"; LAST RESORT {why}" if why else "")), limit, why)
    # signals: escalate graceful kills that outlived the delay, then pick new victims
    listed = {c.container_id: c for c in containers}
    kills: list[KillContainer] = []
    freeing = ZERO
    for rec in kills_in_flight.values():
        c = listed.get(rec.container_id)
        if rec.node_id != ns.node_id or c is None:
            continue
        freeing = freeing + c.resources
        if rec.phase is KillPhase.GRACEFUL and now - rec.since >= s.escalation_delay_s and (s.kill_ams or not c.is_am):
            kills.append(KillContainer(
                container_id=c.container_id, node_id=ns.node_id, graceful=False, stimulus_id=stimulus_id, data_at=sample.time,
                reason=f"still running {now - rec.since:.0f}s after GRACEFUL_SHUTDOWN ≥ escalation delay "
                       f"{s.escalation_delay_s:g}s: FORCEFUL_SHUTDOWN",
            ))
    remaining = allocated - freeing
    if remaining.fits_in(limit):
        return KillPlan(tuple(kills), remaining if timeout < 0 else am_floor, timeout, "", None if not kills else limit)
    if not containers_known:
        return KillPlan(tuple(kills), remaining if timeout < 0 else am_floor, timeout,
                        "containers not listed: no victim can be chosen", limit)
    order = sorted((c for c in containers if c.container_id not in kills_in_flight),
                   key=lambda c: (c.is_am, c.priority, -c.started_at, c.container_id))
    picked: list[ContainerInfo] = []
    why = ""
    for c in order:
        if remaining.fits_in(limit):
            break
        if c.is_am and not s.kill_ams:
            why = why or _last_resort(ns, sample, ams, remaining, limit, reserve_cores)
            if not why:
                break
        picked.append(c)
        remaining = remaining - c.resources
    for c in picked:
        kills.append(KillContainer(
            container_id=c.container_id, node_id=ns.node_id, graceful=True, stimulus_id=stimulus_id, data_at=sample.time,
            reason=(f"allocated <{allocated.memory_mb} MB, {allocated.vcores} vc> > <{limit.memory_mb} MB, "
                    f"{limit.vcores} vc> the primary leaves: GRACEFUL_SHUTDOWN {c.container_id} (priority {c.priority}, "
                    f"started {now - c.started_at:.0f}s ago{', ApplicationMaster: LAST RESORT ' + why if c.is_am and why else ''}) "
                    f"frees <{c.resources.memory_mb} MB, {c.resources.vcores} vc>"),
        ))
    short = "" if remaining.fits_in(limit) else "; not enough killable containers (AMs are protected)"
    floor = Resources(max(0, remaining.memory_mb), max(0, remaining.vcores)) if timeout < 0 else lower(am_floor, remaining)
    return KillPlan(tuple(kills), floor, timeout, f"{len(picked)} victim(s) by lowest priority, youngest first{short}",
                    limit, why if any(c.is_am for c in picked) else "")
