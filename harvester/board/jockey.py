"""Jockey's published results (paper 001): what its control loop publishes and the admin routes
and SloAdvisor.GetDeadlineControl read (board/__init__.py explains the board).

Two items, each written by one side:
- `CONTROL` (the control loop, loop/jockey.py): per deadline job its running app, progress,
  prediction and last decision with its reason, the reservation it drives and the fate of the
  last update; plus a bounded log of decisions that changed something or were refused;
- `UTILITIES` (the admin route `POST /v1/jockey/deadline`, advice/jockey_http.py): deadlines /
  utilities set at run time, which replace the config's for that job (the loop reads them at
  its next tick).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from harvester.board import Board, Item
from harvester.decisions.deadline_utility import DeadlineUtility
from harvester.domain import Resources


@dataclass(frozen=True)
class JobControl:
    """One deadline job at the loop's last tick. `state`: running (decided), idle (no running
    app), no_reservation (decided, nothing to resize), model_error, finished."""

    job: str
    at: float
    state: str
    note: str = ""
    app_id: str = ""
    started_at: float | None = None
    utility: DeadlineUtility | None = None
    utility_source: str = "config"
    reservation_id: str = ""
    progress: float | None = None
    done: Mapping[str, int] = field(default_factory=dict)
    running: Mapping[str, int] = field(default_factory=dict)
    pending: Mapping[str, int] = field(default_factory=dict)
    elapsed_s: float | None = None
    allocation: int | None = None            # containers the reservation holds now
    container: Resources | None = None       # the size of one (the reservation's current stage)
    decided: int | None = None               # the decision's allocation
    admitted: int | None = None              # what LowCost admitted of it (None: no plan to ask)
    target: int | None = None
    rule: str = ""
    predicted_finish_s: float | None = None          # F at the decided allocation (s from the start)
    predicted_finish_current_s: float | None = None  # F at the current allocation
    predictor: str = ""
    reason: str = ""
    fate: str = ""                           # of this tick's update: sent, refused: …, dry_run, cooldown, none


@dataclass(frozen=True)
class DecisionEntry:
    at: float
    job: str
    app_id: str
    reservation_id: str
    previous: int
    allocation: int
    rule: str
    reason: str
    fate: str
    as_of: float | None = None   # time of the progress / RM list it was decided from


@dataclass(frozen=True)
class ControlView:
    at: float | None = None
    actuate: bool = False
    jobs: tuple[JobControl, ...] = ()
    decisions: tuple[DecisionEntry, ...] = ()

    def job(self, name: str) -> JobControl | None:
        return next((j for j in self.jobs if j.job == name), None)

    def by_app(self, app_id: str) -> JobControl | None:
        return next((j for j in self.jobs if j.app_id and j.app_id == app_id), None)


CONTROL: Item[ControlView] = Item("jockey.control", ControlView())
UTILITIES: Item[Mapping[str, DeadlineUtility]] = Item("jockey.utilities", {})


class JockeyBoard:
    """Typed, stateless facade of the Jockey items of one `Board`."""

    def __init__(self, board: Board) -> None:
        self.board = board

    def control(self) -> ControlView:
        return self.board.get(CONTROL)

    def publish_control(self, view: ControlView) -> None:
        self.board.publish(CONTROL, view)

    def utilities(self) -> Mapping[str, DeadlineUtility]:
        return self.board.get(UTILITIES)

    def set_utility(self, job: str, utility: DeadlineUtility | None) -> None:
        """Set (None: drop) the run-time utility of `job`."""
        def change(cur: Mapping[str, DeadlineUtility]) -> Mapping[str, DeadlineUtility]:
            out = dict(cur)
            if utility is None:
                out.pop(job, None)
            else:
                out[job] = utility
            return out
        self.board.update(UTILITIES, change)
