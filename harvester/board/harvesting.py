"""YARN-H's published results (OSDI'16 §4.1): what the refit, jobs and guard loops publish and
the YarnAdvisor servicer, the admin routes and the simulator's Algorithm 1 policy read.

Two items on the board (board/__init__.py):
- `HARVESTING`: one immutable `HarvestingView` — the class model with its reserves and nodes
  per class (refit), the classes' current state tabulated for Algorithm 1 and the guard's last
  decision (guard), the job history (refit, jobs). One item, so a new model and the reset of
  the old classes' state are seen together;
- `GUARD_STATUS`: the guard loop's own bookkeeping (kills in flight, nodes left out, the
  bounded action log with each action's formula and fate, principle 4), for
  GET /v1/harvesting/nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

from harvester.board import Board, Item
from harvester.decisions.class_selection import ClassState, ClassTable
from harvester.decisions.guard import GuardDecision
from harvester.decisions.kills import KillRecord
from harvester.decisions.reserve import ReserveTable
from harvester.models.job_history import JobHistoryModel, RunningApp
from harvester.models.utilization_classes import TenantClassModel


@dataclass(frozen=True)
class HarvestingView:
    model: TenantClassModel | None = None
    reserves: ReserveTable = field(default_factory=ReserveTable)
    class_nodes: Mapping[str, int] = field(default_factory=dict)
    classes: tuple[ClassState, ...] = ()
    table: ClassTable = field(default_factory=lambda: ClassTable.of(()))
    jobs: JobHistoryModel = field(default_factory=lambda: JobHistoryModel(None))
    guard: GuardDecision | None = None
    running: tuple[RunningApp, ...] = ()   # the apps alive at the jobs loop's last poll


@dataclass(frozen=True, slots=True)
class ActionLogEntry:
    """One action the guard decided: what, why (its formula), and what became of it."""

    at: float
    stimulus_id: str
    kind: str          # set_capacity | kill
    target: str        # node id or container id
    detail: str        # capacity and overCommitTimeout, or the signal
    reason: str
    fate: str          # sent | would send (dry run) | not sent | failed|unknown|dropped: <error>


@dataclass(frozen=True)
class GuardStatus:
    """The guard loop's own state, for GET /v1/harvesting/nodes."""

    actuate: bool
    kills: tuple[KillRecord, ...] = ()
    finished_kills: tuple[KillRecord, ...] = ()
    left_out: Mapping[str, str] = field(default_factory=dict)
    recent: tuple[ActionLogEntry, ...] = ()
    last_acted_snapshot: float | None = None
    coverage: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # class → (rises, absorbed) since start
    am_kills: tuple[tuple[float, str, str], ...] = ()                      # (time, node, reason) of the last last resorts
    am_kills_total: int = 0                                                # all of them since start


HARVESTING: Item[HarvestingView] = Item("harvesting", HarvestingView())
GUARD_STATUS: Item[GuardStatus] = Item("harvesting.guard_status", GuardStatus(actuate=False))


class HarvestingBoard:
    """Typed, stateless facade of the harvesting items of one `Board`."""

    def __init__(self, board: Board) -> None:
        self.board = board

    def view(self) -> HarvestingView:
        return self.board.get(HARVESTING)

    def guard_status(self) -> GuardStatus:
        return self.board.get(GUARD_STATUS)

    def _update(self, **changes: object) -> None:
        self.board.update(HARVESTING, lambda v: replace(v, **changes))

    def publish_model(self, model: TenantClassModel, reserves: ReserveTable, class_nodes: Mapping[str, int]) -> None:
        """A new class model (refit): classes' current state must be republished for it."""
        self._update(model=model, reserves=reserves, class_nodes=dict(class_nodes), classes=(), table=ClassTable.of(()))

    def publish_class_nodes(self, class_nodes: Mapping[str, int]) -> None:
        """Nodes per class of the current model (the guard republishes it when nodes come or go)."""
        self._update(class_nodes=dict(class_nodes))

    def publish_classes(self, classes: tuple[ClassState, ...]) -> None:
        """The classes' current state (each guard period); tabulated once here for Algorithm 1."""
        self._update(classes=tuple(classes), table=ClassTable.of(classes))

    def publish_jobs(self, jobs: JobHistoryModel) -> None:
        self._update(jobs=jobs)

    def publish_running(self, running: tuple[RunningApp, ...]) -> None:
        self._update(running=running)

    def publish_guard(self, decision: GuardDecision, *, classes: tuple[ClassState, ...] | None = None,
                      class_nodes: Mapping[str, int] | None = None) -> None:
        """The guard's decision, with the classes' state and nodes per class it computed (one update)."""
        changes: dict[str, object] = {"guard": decision}
        if classes is not None:
            changes.update(classes=tuple(classes), table=ClassTable.of(classes))
        if class_nodes is not None:
            changes["class_nodes"] = dict(class_nodes)
        self._update(**changes)

    def publish_guard_status(self, status: GuardStatus) -> None:
        self.board.publish(GUARD_STATUS, status)
