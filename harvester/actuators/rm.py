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

Contract (actuators/port.py): actions are applied in order; every `RMError` (validation,
transport, HTTP status, decode) becomes an `ActionError` carrying the call's context, returned
by the next `poll_errors()`; nothing raises to the loop. Nothing is retried here: rm_client
retries idempotent calls itself (its policy), a container signal is never repeated after it
may have been sent, and the guard re-decides from the next observation instead of repeating
an action blindly. The RM's answer to a capacity update often shows the OLD capacity, so
success is "the RM accepted it"; the effect is read back by the next poll.
"""

from __future__ import annotations

import threading
from typing import Callable, Sequence

from rm_client import Resource, RMClient, RMError

from harvester.domain import Action, ActionError, KillContainer, SetNodeCapacity

GRACEFUL, FORCEFUL = "GRACEFUL_SHUTDOWN", "FORCEFUL_SHUTDOWN"


def _details(err: RMError) -> dict[str, str]:
    fields = {
        "method": err.method, "path": err.path, "status": err.status, "rm_url": err.rm_url,
        "remote_exception": err.remote_exception, "remote_message": err.remote_message,
        "error_class": type(err).__name__,
    }
    return {k: str(v) for k, v in fields.items() if v is not None}


class RMActuator:
    """Applies actions to one (HA set of) ResourceManager(s); see the module docstring."""

    def __init__(self, client: RMClient, clock_now: Callable[[], float]) -> None:
        self._client = client
        self._now = clock_now
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

    def apply(self, actions: Sequence[Action], request_id: str) -> list[Action]:
        """Send each action once, in order; returns those the RM accepted."""
        sent: list[Action] = []
        for action in actions:
            try:
                self._send(action)
            except RMError as err:
                with self._lock:
                    self._errors.append(ActionError(action, self._now(), str(err), _details(err)))
                continue
            except TypeError as err:  # an action kind this actuator does not know: data, not a crash
                with self._lock:
                    self._errors.append(ActionError(action, self._now(), str(err), {"request_id": request_id}))
                continue
            sent.append(action)
        return sent

    def poll_errors(self) -> list[ActionError]:
        with self._lock:
            errors, self._errors = self._errors, []
        return errors
