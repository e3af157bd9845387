"""The queue-capacity nudge (scenarios/recurring-reservation*) — pure: which node to re-post,
with which resource, or why not now.

3.3.6's plan follower only sets a reservation queue's capacity PERCENTAGES; its effective
resources are recomputed when the cluster resource changes. So a new reservation queue has
0/0 (its apps stay ACCEPTED), and every later change (stage boundary, update) does nothing
until then. Any node-resource update recomputes them, even one that re-posts the node's
unchanged resource (the RM logs "Update resource on node ... with the same resource" and still
recomputes): that is the nudge, `POST /nodes/{id}/resource` with the node's current resource
and `overCommitTimeout` -1 (kills nothing).

The guard also writes node resources, so the two must never disagree. The nudge is decided
and sent INSIDE the guard's tick (loop/guard.py), from the guard's own data:
- the guard sent a capacity update of its own this tick → that update already recomputed the
  queues: the nudge is done without another call;
- the guard's snapshot is stale (or missing) → no nudge now (it stays pending): never post a
  node resource from data the guard itself would not act on;
- otherwise one node is re-posted with the resource the RM reports for it, and only a node
  whose resource is settled: RUNNING, sampled recently, no kill of the guard in flight on it
  (re-posting with -1 would cancel the RM's pending overcommit kill), not over-committed, and
  — where the guard pushed a capacity before — reporting exactly what the guard last pushed
  (otherwise a push is in flight and the RM's answer is older than the guard's intent). The
  first such node by id is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from harvester.decisions.arbiter import PushRecord
from harvester.domain import ClusterSnapshot, SetNodeCapacity

NUDGE_PREFIX = "nudge-"


@dataclass(frozen=True)
class NudgeContext:
    now: float
    snapshot: ClusterSnapshot | None
    stale: bool
    last_pushed: Mapping[str, PushRecord]
    sent_now: frozenset[str]          # nodes the guard sent a capacity to in this tick
    kills_on: frozenset[str]          # nodes with a kill of the guard in flight
    reasons: tuple[str, ...]
    sample_stale_after_s: float
    stimulus_id: str = ""


@dataclass(frozen=True)
class NudgeOutcome:
    """What became of one pending nudge (loop/nudge.py logs these)."""

    at: float
    requested_at: float
    reasons: tuple[str, ...]
    done: bool
    node_id: str | None
    note: str


@dataclass(frozen=True)
class NudgeDecision:
    action: SetNodeCapacity | None
    done: bool                        # the queues get recomputed by this tick (action or the guard's own)
    note: str


def decide_nudge(ctx: NudgeContext) -> NudgeDecision:
    why = "; ".join(ctx.reasons[:5]) + (f" (+{len(ctx.reasons) - 5} more)" if len(ctx.reasons) > 5 else "")
    if ctx.sent_now:
        return NudgeDecision(None, True, f"covered by the guard's own update of {sorted(ctx.sent_now)[0]} ({why})")
    if ctx.stale or ctx.snapshot is None:
        return NudgeDecision(None, False, "deferred: the guard's telemetry is stale")
    for n in sorted(ctx.snapshot.nodes, key=lambda n: n.node_id):
        if n.state != "RUNNING" or ctx.now - n.time > ctx.sample_stale_after_s or n.node_id in ctx.kills_on:
            continue
        if not n.used.fits_in(n.total) or n.total.memory_mb <= 0 or n.total.vcores <= 0:
            continue
        pushed = ctx.last_pushed.get(n.node_id)
        if pushed is not None and pushed.resources != n.total:
            continue
        source = "the guard's last push" if pushed is not None else "the RM's own value"
        action = SetNodeCapacity(node_id=n.node_id, resources=n.total, overcommit_timeout_ms=-1,
                                 stimulus_id=ctx.stimulus_id, data_at=n.time,  # its deadline (actuators/deadline.py)
                                 reason=f"nudge: re-post <{n.total.memory_mb} MB, {n.total.vcores} vc> unchanged "
                                        f"({source}) so the RM recomputes reservation queues after: {why}")
        return NudgeDecision(action, True, f"re-posted {n.node_id}")
    return NudgeDecision(None, False, "deferred: no node with a settled resource in the guard's snapshot")
