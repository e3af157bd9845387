"""Kills in flight: an explicit lifecycle (DESIGN.md principle 6) — pure.

A container the guard decided to kill by signal goes GRACEFUL (GRACEFUL_SHUTDOWN sent: the NM
sends SIGTERM ~0.9 s later, exit 143 — fixtures scenarios/signal-and-kill) and, if it is still
running after the escalation delay, FORCEFUL (FORCEFUL_SHUTDOWN: SIGKILL ~0.3 s later, exit
137). It ends GONE when the RM no longer lists it, or FAILED when the signal could not be sent
(the actuator reports an `ActionError` on the next tick; the container may be picked again).

    (new) ──▶ GRACEFUL ──▶ FORCEFUL ──▶ GONE
      └──────────────────────▲  │  └──▶ FAILED
                GRACEFUL ──▶ GONE / FAILED

The loop (phase B) owns the state: after applying a batch it calls `record_sent` and
`record_failures`, after each poll `reconcile`; the guard reads the in-flight records from its
context. Every record keeps its status history.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable, Mapping, Sequence

from harvester.domain import Action, ActionError, ClusterSnapshot, KillContainer
from harvester.lifecycle import InvalidTransition  # noqa: F401 (raised here; callers catch it from here)


class KillPhase(str, Enum):
    GRACEFUL = "GRACEFUL"
    FORCEFUL = "FORCEFUL"
    GONE = "GONE"
    FAILED = "FAILED"


#: Valid transitions; None is "not yet being killed".
TRANSITIONS: Mapping[KillPhase | None, frozenset[KillPhase]] = {
    None: frozenset({KillPhase.GRACEFUL, KillPhase.FORCEFUL}),
    KillPhase.GRACEFUL: frozenset({KillPhase.FORCEFUL, KillPhase.GONE, KillPhase.FAILED}),
    KillPhase.FORCEFUL: frozenset({KillPhase.GONE, KillPhase.FAILED}),
    KillPhase.GONE: frozenset(),
    KillPhase.FAILED: frozenset(),
}
TERMINAL = frozenset({KillPhase.GONE, KillPhase.FAILED})


@dataclass(frozen=True, slots=True)
class KillRecord:
    container_id: str
    node_id: str
    phase: KillPhase
    since: float
    history: tuple[tuple[KillPhase, float, str], ...]

    @property
    def started_at(self) -> float:
        return self.history[0][1]


def transition(record: KillRecord | None, to: KillPhase, at: float, why: str, *, container_id: str = "",
               node_id: str = "") -> KillRecord:
    """Move `record` (None = new) to `to`; raises `InvalidTransition` on an invalid edge."""
    current = None if record is None else record.phase
    if to not in TRANSITIONS[current]:
        name = container_id if record is None else record.container_id
        raise InvalidTransition(f"kill of {name}: {current and current.value} -> {to.value} is not allowed")
    if record is None:
        return KillRecord(container_id, node_id, to, at, ((to, at, why),))
    return replace(record, phase=to, since=at, history=record.history + ((to, at, why),))


def record_sent(kills: Mapping[str, KillRecord], sent: Sequence[Action], now: float) -> dict[str, KillRecord]:
    """The in-flight map after the actuator sent `sent` (non-kill actions are ignored)."""
    out = dict(kills)
    for a in sent:
        if not isinstance(a, KillContainer):
            continue
        to = KillPhase.GRACEFUL if a.graceful else KillPhase.FORCEFUL
        prev = out.get(a.container_id)
        if prev is not None and prev.phase is to:
            continue  # a resend of the same signal keeps the original clock
        out[a.container_id] = transition(prev, to, now, a.reason, container_id=a.container_id, node_id=a.node_id)
    return out


def record_failures(
    kills: Mapping[str, KillRecord], errors: Iterable[ActionError]
) -> tuple[dict[str, KillRecord], list[KillRecord]]:
    """Failed signals end their records (FAILED); returns (in flight, finished). A signal of
    unknown outcome (it may have been delivered) stays in flight: the next snapshot tells."""
    out, finished = dict(kills), []
    for e in errors:
        a = e.action
        if isinstance(a, KillContainer) and a.container_id in out and e.outcome == "failed":
            finished.append(transition(out.pop(a.container_id), KillPhase.FAILED, e.time, e.error))
    return out, finished


def reconcile(kills: Mapping[str, KillRecord], snapshot: ClusterSnapshot) -> tuple[dict[str, KillRecord], list[KillRecord]]:
    """Containers the RM no longer lists are GONE; returns (in flight, finished).

    Only a snapshot with the complete container list can prove a container gone.
    """
    if not snapshot.containers_complete or not kills:
        return dict(kills), []
    running = {c.container_id for c in snapshot.containers}
    out, finished = {}, []
    for cid, rec in kills.items():
        if cid in running:
            out[cid] = rec
        else:
            finished.append(transition(rec, KillPhase.GONE, snapshot.time, "no longer listed by the RM"))
    return out, finished
