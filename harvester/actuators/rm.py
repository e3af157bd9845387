"""The live `Actuator`: the guard's actions applied through the RM REST API (rm_client).

- `SetNodeCapacity` → `POST /ws/v1/cluster/nodes/{id}/resource` with
  `{"resource":{"memory":M,"vCores":V},"overCommitTimeout":T}` (T in MILLISECONDS; -1 = the RM
  kills nothing, T ≥ 0 = the RM kills the youngest non-AM containers, exactly enough, after T;
  fixtures scenarios/overcommit-timeout). rm_client validates the body first (the RM silently
  turns a malformed body into 0 MB / 0 vcores and accepts negatives); a zero the arbiter
  intends — a node whose primary uses every core — is sent with `allow_zero=True`.
- `KillContainer` → `POST /ws/v1/cluster/containers/{id}/signal/GRACEFUL_SHUTDOWN` (SIGTERM
  ~0.9 s later, exit 143) or `FORCEFUL_SHUTDOWN` (SIGKILL ~0.3 s later, exit 137)
  (scenarios/signal-and-kill).

Contract (actuators/port.py) and deadlines (actuators/deadline.py, DESIGN.md principle 16):
each action is checked right before it is sent — data older than `stale_after_s`, or the
apply's time budget (`budget_s`, the guard's period) spent: it is DROPPED, never sent; else it
is sent ONCE with the time left as the RM call's deadline (rm_client retries nothing that may
have reached the RM: every cluster-changing write is non-idempotent in its endpoint table).
Outcomes are recorded as the RM reported them (`ActionError.outcome`):
- accepted (2xx): sent; the RM's answer to a capacity update often shows the OLD capacity, so
  the effect is read back by the next poll;
- refused (validation, 4xx, a 5xx from the RM itself) or never reached (refused connection,
  connect timeout, standby only): `failed`;
- a read timeout, a connection lost after sending, a proxy's 502/503/504 or an unreadable 2xx
  answer: `unknown` — it MAY have been applied, so it counts as sent (the kill stays in flight,
  the push starts its rate-limit clock) and the next snapshot tells; it is never logged failed.
Nothing raises to the loop.
"""

from __future__ import annotations

import threading
from typing import Sequence

from rm_client import RMClient, RMDecodeError, RMError, RMHTTPError, RMTransportError, Resource

from harvester.actuators.deadline import ActionBudget
from harvester.clock import Clock
from harvester.domain import Action, ActionError, KillContainer, SetNodeCapacity
from harvester.observability.metrics import Metrics

GRACEFUL, FORCEFUL = "GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"
_GATEWAY = (502, 503, 504)


def _details(err: RMError) -> dict[str, str]:
    fields = {
        "method": err.method, "path": err.path, "status": err.status, "rm_url": err.rm_url,
        "remote_exception": err.remote_exception, "remote_message": err.remote_message,
        "error_class": type(err).__name__,
    }
    return {k: str(v) for k, v in fields.items() if v is not None}


def outcome_of(err: RMError) -> str:
    """`unknown` when the RM may have applied the call, else `failed` (module docstring)."""
    if isinstance(err, RMTransportError):
        return "unknown" if err.maybe_sent else "failed"
    if isinstance(err, RMHTTPError):
        return "unknown" if err.status in _GATEWAY else "failed"
    if isinstance(err, RMDecodeError):
        return "unknown"  # the RM answered 2xx (it applied it) but the answer could not be read
    return "failed"


class RMActuator:
    """Applies actions to one (HA set of) ResourceManager(s); see the module docstring."""

    def __init__(self, client: RMClient, clock: Clock, *, stale_after_s: float, budget_s: float,
                 metrics: Metrics | None = None) -> None:
        self._client = client
        self._clock = clock
        self._stale_after_s = stale_after_s
        self._budget_s = budget_s
        self._metrics = metrics
        self._errors: list[ActionError] = []
        self._lock = threading.Lock()

    def _send(self, action: Action) -> None:
        if isinstance(action, SetNodeCapacity):
            r = action.resources
            self._client.update_node_resource(
                action.node_id, Resource(r.memory_mb, r.vcores), action.overcommit_timeout_ms,
                allow_zero=r.memory_mb == 0 or r.vcores == 0,
            )
        elif isinstance(action, KillContainer):
            self._client.signal_container(action.container_id, GRACEFUL if action.graceful else FORCEFUL)
        else:
            raise TypeError(f"the RM actuator cannot apply {type(action).__name__}")

    def _report(self, action: Action, error: str, details: dict[str, str], outcome: str) -> None:
        with self._lock:
            self._errors.append(ActionError(action, self._clock.now(), error, details, outcome))

    def _count(self, action: Action, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.record_action_outcome(action.kind, outcome)

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        """Send each action at most once, in order, before its deadline; returns those sent
        (accepted, or of unknown outcome: they may have taken effect)."""
        budget = ActionBudget(self._clock, stale_after_s=self._stale_after_s, budget_s=self._budget_s)
        sent: list[Action] = []
        for action in actions:
            verdict = budget.check(action)
            if verdict.drop is not None:
                self._report(action, verdict.drop, {"request_id": request_id, "why": verdict.why}, "dropped")
                self._count(action, "dropped")
                continue
            try:
                with self._client.deadline(verdict.timeout_s):
                    self._send(action)
            except RMError as err:
                outcome = outcome_of(err)
                self._report(action, str(err), _details(err), outcome)
                self._count(action, outcome)
                if outcome == "unknown":
                    sent.append(action)
                continue
            except TypeError as err:  # an action kind this actuator does not know: data, not a crash
                self._report(action, str(err), {"request_id": request_id}, "failed")
                self._count(action, "failed")
                continue
            self._count(action, "sent")
            sent.append(action)
        return sent

    def poll_errors(self) -> list[ActionError]:
        with self._lock:
            errors, self._errors = self._errors, []
        return errors
