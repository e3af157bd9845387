"""The current harvesting models and decisions, as the read side serves them.

The composition root owns one `HarvestingState`; the refit loop publishes a new class model
(and reserves, job history), the guard loop publishes each decision and the classes' current
state, and the YarnAdvisor servicer reads a consistent `AdvisorView` per request. Publishing
swaps one immutable view under a lock, so a reader never sees half an update.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Mapping

from harvester.decisions.class_selection import DEFAULT_WEIGHTS, ClassState, ClassTable
from harvester.decisions.guard import GuardDecision
from harvester.decisions.reserve import ReserveTable
from harvester.decisions.strategy import SelectionStrategy
from harvester.models.job_history import JobHistoryModel, LengthThresholds
from harvester.models.utilization_classes import TenantClassModel

DEFAULT_SELECTION = SelectionStrategy(DEFAULT_WEIGHTS, LengthThresholds(300.0, 3600.0, "configured defaults (cold start)"))


@dataclass(frozen=True)
class AdvisorView:
    model: TenantClassModel | None = None
    reserves: ReserveTable = field(default_factory=ReserveTable)
    class_nodes: Mapping[str, int] = field(default_factory=dict)
    classes: tuple[ClassState, ...] = ()
    table: ClassTable = field(default_factory=lambda: ClassTable.of(()))
    jobs: JobHistoryModel = field(default_factory=lambda: JobHistoryModel(None))
    selection: SelectionStrategy = DEFAULT_SELECTION
    guard: GuardDecision | None = None


class HarvestingState:
    """Thread-safe holder of the current `AdvisorView`."""

    def __init__(self, selection: SelectionStrategy = DEFAULT_SELECTION) -> None:
        self._lock = threading.Lock()
        self._view = AdvisorView(selection=selection)

    def view(self) -> AdvisorView:
        with self._lock:
            return self._view

    def _update(self, **changes: object) -> None:
        with self._lock:
            self._view = replace(self._view, **changes)

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

    def publish_guard(self, decision: GuardDecision) -> None:
        self._update(guard=decision)
