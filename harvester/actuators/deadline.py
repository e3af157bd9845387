"""Every action has a deadline (DESIGN.md principle 16): the one check every actuator makes.

An action carries `data_at`, the time of the observation it was decided from (domain.Action).
An actuator opens an `ActionBudget` for each `apply` call and asks it, right before sending
each action, `check(action)`:

- no `data_at`, or data older than `stale_after_s` at this moment: DROP it ("stale") — a kill
  decided on a snapshot from 80 s ago must never reach the RM;
- the call's time budget (`budget_s`, the loop's period: a tick must not block past it) is
  spent: DROP it ("budget"); the next tick decides again from fresh data;
- else SEND it, with `timeout_s` real seconds for the RM call: the smaller of what is left of
  the budget and of the data's life (the RM client's per-call deadline).
Dropped actions are reported like failures, as `ActionError(outcome="dropped")` on the next
`poll_errors()`, and counted (`harvester_action_outcomes_total{outcome="dropped"}`).

A new actuator complies by: `budget = ActionBudget(clock, stale_after_s=..., budget_s=...)`
once per apply; `verdict = budget.check(action)`; `if verdict.drop: report it dropped` else
send within `verdict.timeout_s` (e.g. `with rm_client.deadline(verdict.timeout_s): ...`); never
retry a write after it may have reached the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from harvester.clock import Clock, wall_seconds
from harvester.domain import Action


@dataclass(frozen=True, slots=True)
class Verdict:
    """`drop` is why the action must not be sent (None: send it within `timeout_s` real seconds)."""

    drop: str | None
    why: str  # "stale" | "budget" | "" (send)
    timeout_s: float = 0.0


class ActionBudget:
    """The deadlines of one `apply` call (module docstring)."""

    def __init__(self, clock: Clock, *, stale_after_s: float, budget_s: float) -> None:
        if not stale_after_s > 0 or not budget_s > 0:
            raise ValueError(f"stale_after_s and budget_s must be > 0, got {stale_after_s}, {budget_s}")
        self._clock = clock
        self.stale_after_s = stale_after_s
        self.ends = clock.now() + budget_s

    def check(self, action: Action) -> Verdict:
        now = self._clock.now()
        if action.data_at is None:
            return Verdict("no data time: an action of unknown age is never sent", "stale")
        age = now - action.data_at
        if age > self.stale_after_s:
            return Verdict(f"data {age:.1f}s old at sending > staleness limit {self.stale_after_s:g}s: not sent",
                           "stale")
        left = min(self.ends - now, action.data_at + self.stale_after_s - now)
        if left <= 0:
            return Verdict("the tick's time budget is spent: not sent (the next tick decides again)", "budget")
        return Verdict(None, "", wall_seconds(self._clock, left))
