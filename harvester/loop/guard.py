"""Tick that runs the guard every control period (OSDI'16 §2, §4.1; decisions/guard.py).

One tick, in order:
1. the actuator's errors from the last batch come back as data: failed signals end their kill
   records (FAILED, the container may be picked again), a failed capacity update is forgotten
   as "pushed" (its rate-limit clock does not start);
2. the newest snapshot (`RecordTelemetry.latest()`, with its age) is the only input. A snapshot
   the guard already acted on is not acted on again (the RM's answer to the last batch is not
   in it yet, so the same cut would be sent twice) unless it went stale; a stale one (or none)
   makes `evaluate` return no action at all — RM down or slow means no kill and no new
   capacity (the fail-safe rules of decisions/guard.py);
3. kills in flight are reconciled with the snapshot (containers the RM no longer lists are
   GONE), nodes are resolved (loop/harvest_nodes.NodeRegistry) and the guard evaluated with
   the published class model and reserves (cold-start reserve without a model);
4. with `actuate`, the actions go to the actuator (rm: actuators/rm.py) once; what was sent
   updates the kill records and the last push per node;
5. the decision, the classes' current state and the loop's own status (kills in flight, the
   bounded log of the last actions with their stimulus, formula and fate — principle 4 —, the
   reserve's coverage per class since start and the ApplicationMasters taken as a last resort)
   are published on the state board (board/harvesting.py) for the read side (gRPC
   ListNodeCapacities / SelectClasses, GET /v1/harvesting/nodes) and recorded in metrics.
What each node looked like at this decision (`GuardDecision.memos`) is kept for the next one:
an increase needs two fresh samples that allow it, and a rise is measured between decisions.
The same object runs live (a `ControlLoop` thread) and in the simulator (the engine ticks it on
simulated time with `SimTelemetrySource` / `SimActuator`; harvester/control.py builds both).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import replace
from typing import Callable, Mapping, Sequence

from harvester.actuators.port import Actuator
from harvester.board.harvesting import ActionLogEntry, GuardStatus, HarvestingBoard
from harvester.decisions.arbiter import PushRecord
from harvester.decisions.class_view import class_states, nodes_per_class
from harvester.decisions.guard import GuardContext, GuardDecision, NodeMemo, NodeView, evaluate
from harvester.decisions.guard_table import NodeViews
from harvester.decisions.kills import KillRecord, reconcile, record_failures, record_sent
from harvester.decisions.nudge import NUDGE_PREFIX, NudgeContext, decide_nudge
from harvester.decisions.strategy import GuardStrategy
from harvester.domain import (
    Action, ActionError, ClusterSnapshot, DecisionRecord, KillContainer, Resources, SetNodeCapacity,
)
from harvester.loop.harvest_nodes import NodeRegistry
from harvester.loop.nudge import NudgeChannel
from harvester.loop.runner import TickResult
from harvester.observability.metrics import Metrics

LOG_SIZE = 500
#: The fate of an action in a dry run (`harvesting.actuate: false`): decided, nothing was sent.
WOULD_SEND = "would send"


def dry_run(decision: GuardDecision) -> GuardDecision:
    """The decision as a dry run tells it: "sent:<label>" outcomes become "would_send:<label>"
    (the RM kept its capacity: nothing was sent)."""
    if isinstance(decision.nodes, NodeViews):
        return replace(decision, nodes=decision.nodes.dry_run())
    return replace(decision, nodes=tuple(
        v._replace(outcome="would_send:" + v.outcome.removeprefix("sent:")) if v.outcome.startswith("sent:") else v
        for v in decision.nodes))


def _describe(a: Action) -> tuple[str, str, str]:
    if isinstance(a, SetNodeCapacity):
        r = a.resources
        return "set_capacity", a.node_id, f"<{r.memory_mb} MB, {r.vcores} vc> overCommitTimeout={a.overcommit_timeout_ms} ms"
    if isinstance(a, KillContainer):
        return "kill", a.container_id, ("GRACEFUL_SHUTDOWN" if a.graceful else "FORCEFUL_SHUTDOWN") + f" on {a.node_id}"
    return type(a).__name__, "", ""


class GuardTick:
    """`tick(now)`: one guard period (module docstring)."""

    def __init__(self, latest: Callable[[], ClusterSnapshot | None], registry: NodeRegistry, board: HarvestingBoard,
                 actuator: Actuator | None, metrics: Metrics, strategy: GuardStrategy, *,
                 record: Callable[[Sequence[DecisionRecord]], int] | None = None,
                 nudges: NudgeChannel | None = None) -> None:
        self._latest = latest
        self._registry = registry
        self._board = board
        self._actuator = actuator
        self._metrics = metrics
        self._strategy = strategy
        self._lock = threading.Lock()  # one tick at a time
        self._last_pushed: dict[str, PushRecord] = {}
        self._kills: dict[str, KillRecord] = {}
        self._finished: deque[KillRecord] = deque(maxlen=LOG_SIZE)
        self._log: deque[ActionLogEntry] = deque(maxlen=LOG_SIZE)
        self._left_out: dict[str, str] = {}
        self._acted_on: float | None = None
        self._seq = 0
        self._dry_kills: frozenset[tuple[str, ...]] = frozenset()  # dry run: kills decided last tick
        self._record_sink = record  # the store's decision log (`harvester explain` without a sidecar)
        self._records: list[DecisionRecord] = []
        self._nudges = nudges  # Morpheus's queue nudges go out through this tick (decisions/nudge.py)
        self._sent_capacity: frozenset[str] = frozenset()
        self._memos: Mapping[str, NodeMemo] = {}
        self._class_nodes: tuple[object, object, dict[str, int]] = (None, None, {})
        self._coverage: dict[str, tuple[int, int]] = {}
        self._am_kills: deque[tuple[float, str, str]] = deque(maxlen=LOG_SIZE)
        self._am_kills_total = 0
        board.publish_guard_status(GuardStatus(self.actuating))

    @property
    def actuating(self) -> bool:
        return self._actuator is not None

    def status(self) -> GuardStatus:
        """The state as of the end of the last tick, as published (never waits for a tick in progress)."""
        return self._board.guard_status()

    def _publish_status(self) -> None:
        self._board.publish_guard_status(GuardStatus(self.actuating, tuple(self._kills.values()), tuple(self._finished),
                                                     dict(self._left_out), tuple(self._log), self._acted_on,
                                                     dict(self._coverage), tuple(self._am_kills), self._am_kills_total))

    def _take_errors(self) -> list[ActionError]:
        """The last batch's outcomes as the RM reported them: `failed` ends a kill (the container
        may be picked again) and forgets a push; `unknown` (it may have been applied) keeps both
        — the next snapshot tells; `dropped` was never sent (actuators/deadline.py)."""
        errors = self._actuator.poll_errors() if self._actuator is not None else []
        self._kills, failed = record_failures(self._kills, errors)
        self._finished.extend(failed)
        for e in errors:
            if (isinstance(e.action, SetNodeCapacity) and e.outcome != "unknown"
                    and not e.action.stimulus_id.startswith(NUDGE_PREFIX)):
                self._last_pushed.pop(e.action.node_id, None)
            kind, target, detail = _describe(e.action)
            entry = ActionLogEntry(e.time, e.action.stimulus_id, kind, target, detail, e.action.reason,
                                   f"{e.outcome}: {e.error}")  # failed | unknown | dropped, as reported
            self._log.append(entry)
            self._records.append(_decision_record(entry, e.action, None, {}, e.action.data_at))
        self._metrics.record_action_errors(Counter(_describe(e.action)[0] for e in errors if e.outcome == "failed"))
        return errors

    def tick(self, now: float) -> TickResult:
        with self._lock:
            errors = self._take_errors()
            snap = self._latest()
            s = self._strategy
            age = None if snap is None else max(0.0, now - snap.time)
            if age is not None:
                self._metrics.record_telemetry_age(age)
            stale = age is None or age > s.stale_after_s
            self._sent_capacity = frozenset()
            if not stale and self._acted_on is not None and snap is not None and snap.time <= self._acted_on:
                result = TickResult({"acted": False, "why": "no new snapshot", "action_errors": len(errors)})
            else:
                result = self._decide(now, snap, errors)
            if self._nudges is not None and self._nudges.pending(now) is not None:
                self._nudge(now, snap, stale)
            self._publish_status()
            records, self._records = self._records, []
            if self._record_sink is not None and records:
                self._metrics.record_rows_written("decision_log", len(records))
                self._record_sink(records)
            return result

    def _nudge(self, now: float, snap: ClusterSnapshot | None, stale: bool) -> None:
        """Morpheus's pending nudge, decided from this tick's own data (decisions/nudge.py)."""
        assert self._nudges is not None
        reasons, _ = self._nudges.pending()  # type: ignore[misc]
        self._seq += 1
        stimulus = f"{NUDGE_PREFIX}{now:.0f}-{self._seq}"
        ctx = NudgeContext(now, snap, stale, dict(self._last_pushed), self._sent_capacity,
                           frozenset(k.node_id for k in self._kills.values()), reasons,
                           self._strategy.stale_after_s, stimulus)
        decision = decide_nudge(ctx)
        actuator = self._actuator or self._nudges.actuator
        if decision.action is None:
            if decision.done:
                self._nudges.done(now, None, decision.note)
            else:
                self._nudges.deferred(now, decision.note)
            return
        if actuator is None:
            self._nudges.deferred(now, "deferred: nothing actuates node resources (dry run)")
            return
        sent = actuator.apply([decision.action], stimulus)
        if actuator is not self._actuator:
            actuator.poll_errors()  # a separate nudge actuator: the failure is the missing `sent`
        _, target, detail = _describe(decision.action)
        self._log.append(ActionLogEntry(now, stimulus, "nudge", target, detail, decision.action.reason,
                                        "sent" if sent else "not sent"))
        if sent:
            self._nudges.done(now, decision.action.node_id, decision.note)
        else:
            self._nudges.deferred(now, f"deferred: the re-post of {target} was not sent")

    def _decide(self, now: float, snap: ClusterSnapshot | None, errors: list[ActionError]) -> TickResult:
        if snap is not None:
            self._kills, gone = reconcile(self._kills, snap)
            self._finished.extend(gone)
        nodes, self._left_out = self._registry.resolve(snap)
        view = self._board.view()
        model = view.model
        self._seq += 1
        stimulus = f"guard-{now:.0f}-{self._seq}"
        ctx = GuardContext(now, snap, nodes, model.tenant_class_map() if model else {}, view.reserves, self._strategy,
                           dict(self._last_pushed), dict(self._kills), stimulus, self._memos)
        began = time.perf_counter()  # decision cost in wall time, whatever the Clock
        decision = evaluate(ctx)
        self._metrics.record_decision("guard", time.perf_counter() - began)
        if self._actuator is None:
            decision = dry_run(decision)
        sent: list[Action] = []
        if self._actuator is not None and decision.actions:
            sent = self._actuator.apply(decision.actions, stimulus)
        self._record(decision, sent, now, snap)
        if snap is not None:
            self._acted_on = snap.time
        self._memos = decision.memos  # immutable (a MemoTable from evaluate): no copy per tick
        for cid, (rises, absorbed) in decision.coverage.items():
            r, a = self._coverage.get(cid, (0, 0))
            self._coverage[cid] = (r + rises, a + absorbed)
        self._metrics.record_rises(decision.coverage)
        if sent or self._actuator is None:
            self._am_kills.extend((now, node, why) for node, why in decision.am_kills)
            self._am_kills_total += len(decision.am_kills)
            self._metrics.record_am_kills(Counter(why.split(":", 1)[0] for _, why in decision.am_kills))
        if model is None:
            self._board.publish_guard(decision)
        else:
            if self._class_nodes[0] is not model or self._class_nodes[1] is not nodes:
                self._class_nodes = (model, nodes, nodes_per_class(model, nodes))  # the same nodes: counted once
            class_nodes = self._class_nodes[2]
            self._board.publish_guard(decision, class_nodes=class_nodes if class_nodes != dict(view.class_nodes) else None,
                                      classes=class_states(model, view.reserves, nodes, snap, now=now,
                                                           stale_after_s=self._strategy.stale_after_s, guard=decision))
        self._metrics.record_harvest(decision.harvested_vcores_by_node(), decision.harvested_vcores_by_class())
        self._metrics.record_capacity_outcomes(decision.outcomes())
        if self._actuator is not None:
            counted = GuardDecision(now, tuple(sent), ())
        else:  # a dry run decides the same kill every tick while the spike lasts: count it once
            keyed = [(a, _kill_key(a)) for a in decision.actions]
            counted = GuardDecision(now, tuple(a for a, k in keyed if k and k not in self._dry_kills), ())
            self._dry_kills = frozenset(k for _, k in keyed if k)
        self._metrics.record_kills(counted.kills_by_reason())
        return TickResult({
            "acted": True, "nodes": len(decision.nodes), "actions": len(decision.actions), "sent": len(sent),
            "kills_in_flight": len(self._kills), "action_errors": len(errors),
            "model_version": model.version if model else None, "actuate": self.actuating,
        })

    def _record(self, decision: GuardDecision, sent: list[Action], now: float, snap: ClusterSnapshot | None) -> None:
        self._kills = record_sent(self._kills, sent, now)
        sent_ids = {id(a) for a in sent}
        for a in sent:
            if isinstance(a, SetNodeCapacity):
                self._last_pushed[a.node_id] = PushRecord(a.resources, now)
        self._sent_capacity = frozenset(a.node_id for a in sent if isinstance(a, SetNodeCapacity))
        nodes = decision.nodes
        views = nodes if isinstance(nodes, NodeViews) else {v.node_id: v for v in nodes}  # `.get(node_id)` on both
        victims = {a.container_id for a in decision.actions if isinstance(a, KillContainer)}
        apps = {c.container_id: c.app_id for c in snap.containers if c.container_id in victims} if snap is not None and victims else {}
        for a in decision.actions:
            kind, target, detail = _describe(a)
            fate = WOULD_SEND if self._actuator is None else ("sent" if id(a) in sent_ids else "not sent")
            entry = ActionLogEntry(now, a.stimulus_id, kind, target, detail, a.reason, fate)
            self._log.append(entry)
            self._records.append(_decision_record(entry, a, views.get(_node_of(a)), apps,
                                                  None if snap is None else snap.time))


def _node_of(a: Action) -> str:
    return a.node_id if isinstance(a, (SetNodeCapacity, KillContainer)) else ""


def _resources(r: Resources | None) -> dict[str, int] | None:
    return None if r is None else {"memory_mb": r.memory_mb, "vcores": r.vcores}


def _decision_record(entry: ActionLogEntry, a: Action, view: NodeView | None, apps: Mapping[str, str],
                     data_as_of: float | None) -> DecisionRecord:
    """The action log entry as the store keeps it, with the node view's numbers as its inputs."""
    inputs: dict[str, object] = {}
    if view is not None:
        inputs = {"class_id": view.class_id, "total": _resources(view.total), "primary_cpu_cores": view.primary_cpu_cores,
                  "reserve_cpu_cores": view.reserve_cpu_cores, "harvestable": _resources(view.harvestable),
                  "capacity_after": _resources(view.capacity_after), "outcome": view.outcome, "kills": view.kills}
    if isinstance(a, SetNodeCapacity):
        inputs["overcommit_timeout_ms"] = a.overcommit_timeout_ms
    container = a.container_id if isinstance(a, KillContainer) else ""
    return DecisionRecord(entry.at, "guard", entry.kind, entry.target, entry.reason, entry.fate, entry.stimulus_id,
                          entry.detail, _node_of(a), "" if view is None else view.tenant, apps.get(container, ""),
                          data_as_of, inputs)


def _kill_key(a: Action) -> tuple[str, ...] | None:
    """What makes two ticks' kills the same kill (None: not a kill)."""
    if isinstance(a, KillContainer):
        return ("signal", a.container_id, "graceful" if a.graceful else "forceful")
    if isinstance(a, SetNodeCapacity) and a.overcommit_timeout_ms >= 0:
        return ("rm_overcommit", a.node_id)
    return None
