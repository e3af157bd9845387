"""The control plane: Harvester's loops built from settings over given ports (the loop half of
the composition root; harvester/app.py is the other half).

DESIGN.md principle 15: a loop is the unit of control, live and simulated. `ControlPlane`
builds every loop object of one Harvester from its settings, a state board and its ports —
the `TelemetrySource`, the `Actuator` (None: dry run), the `HistoryStore`, and optionally the
RM's finished apps (`JobRunSource`) and the NameNode (`NameNodeSource`) — and lists them as
`LoopSpec`s. Who runs them differs, what runs does not:

- live, harvester/app.py gives the real ports (RM REST telemetry and actuator, the SQLite file,
  the NameNode's JMX, the RM's reservation system, the provenance files) and runs each spec on
  its own `ControlLoop` thread on the RealClock;
- in the simulator, harvester/sim/live.py gives `SimTelemetrySource`, `SimActuator`, SQLite
  `:memory:` and the simulated finished jobs, and the engine ticks the same specs on the
  SimClock (harvester/sim/simulation.py), those due at one instant in the order listed here.

Loops, in data-flow order: telemetry (poll; baselines, the tenant-slot fold and HDFS-H's busy
flags observe every good poll) → refit (classes, margins, reserves; checked every
`REFIT_CHECK_S`, refitted every `harvesting.refit_interval_s`) → guard (capacity and kills
every `harvesting.control_period_s`) → node-ordering (the RM plug-in's node orders, right
behind the guard) → jobs (finished apps → job runs and their skylines, when a source is given) →
morpheus-ingest (provenance files), morpheus-refit (SLOs and skylines), morpheus-reservations
(LowCost plan, the RM's reservations, DRA; nudges go out through the guard's tick) when
`morpheus.enabled` → jockey (deadline jobs' progress, decision, reservation update; given the
Morpheus reservation loop as its coordinator when both run) when `jockey.enabled` → retention (prune old rows) → hdfs-poll, hdfs-refit (when `hdfs.enabled`).

`settings.harvesting` must already be resolved (app.harvesting_settings applies the embedded
default's tenant rules); nothing here reads a clock, a file or the network by itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from harvester.actuators.port import Actuator
from harvester.board import Board
from harvester.board.harvesting import HarvestingBoard
from harvester.board.morpheus import MorpheusBoard
from harvester.board.hdfs import PlacementBoard
from harvester.board.jockey import JockeyBoard
from harvester.board.node_ordering import NodeOrderingBoard
from harvester.config import Settings
from harvester.decisions.strategy import NodeStrategy, guard_strategy, selection_strategy
from harvester.history.store import HistoryStore
from harvester.loop.guard import GuardTick
from harvester.loop.harvest_nodes import FoldTenantSlots, NodeRegistry, RecordPrimaryVectors
from harvester.loop.hdfs_placement import HdfsPlacementLoop, NameNodeSource
from harvester.loop.job_runs import JobRunSource, RecordJobRuns
from harvester.loop.jockey import DeadlineJobSource, JockeyControl, default_loader
from harvester.loop.morpheus_ingest import IngestProvenance
from harvester.loop.morpheus_refit import MorpheusRefit
from harvester.loop.morpheus_reservations import MorpheusReservations, ReservationActuator, ReservationObserver
from harvester.loop.nudge import NudgeChannel
from harvester.loop.node_ordering import PublishNodeOrdering
from harvester.loop.record_telemetry import Observer, RecordTelemetry
from harvester.loop.refit import Refit
from harvester.loop.retention import PruneHistory
from harvester.loop.runner import LoopSpec
from harvester.models.job_history import JobType
from harvester.observability.metrics import Metrics
from harvester.telemetry.provenance_tail import ProvenanceSource
from harvester.telemetry.source import TelemetrySource

#: The refit loop checks this often whether a refit is due (refits follow refit_interval_s).
REFIT_CHECK_S = 300.0
#: Finished applications are read as job runs this often (Algorithm 1 lines 3-4); with Morpheus
#: on, every morpheus.history.poll_interval_s (the skylines are sampled then).
JOBS_INTERVAL_S = 60.0
#: The Morpheus refit loop checks at least this often whether a refit is due or was requested.
MORPHEUS_REFIT_CHECK_S = 60.0
DAY_S = 86400.0


def reaction_horizon_s(settings: Settings) -> float:
    """H of the reaction-time reserve: `harvesting.reserve.horizon_s`, or how long a primary rise
    can go unanswered — until the next poll, plus the RM's lag in showing it, plus the next guard
    period (models/reaction_margins.py)."""
    h = settings.harvesting
    if h.reserve.horizon_s is not None:
        return h.reserve.horizon_s
    return settings.telemetry.poll_interval_s + h.reserve.rm_lag_s + h.control_period_s


class ControlPlane:
    """Every loop of one Harvester over the given ports; `loops` in data-flow order."""

    def __init__(self, settings: Settings, board: Board, *, source: TelemetrySource, store: HistoryStore,
                 metrics: Metrics, actuator: Actuator | None = None, job_runs: JobRunSource | None = None,
                 namenode: NameNodeSource | None = None, reservations: ReservationObserver | None = None,
                 reservation_actuator: ReservationActuator | None = None,
                 provenance: ProvenanceSource | None = None, deadline_jobs: DeadlineJobSource | None = None,
                 deadline_actuator: ReservationActuator | None = None, subclusters: Sequence[str] = ()) -> None:
        h = settings.harvesting
        self.settings = settings
        self.harvesting = HarvestingBoard(board)
        self.placement = PlacementBoard(board)
        self.node_ordering = NodeOrderingBoard(board)
        # rm.clusters: each sub-cluster's RM plug-in reads its own part (harvester/subclusters.py)
        self.node_ordering_subclusters = {name: NodeOrderingBoard(board, name) for name in subclusters}
        self.nodes = NodeRegistry(store, h)
        observers: list[Observer] = [self.nodes.observe, FoldTenantSlots(self.nodes, store, metrics, step_s=h.sample_step_s),
                                     RecordPrimaryVectors(self.nodes, store, metrics)]
        self.hdfs: HdfsPlacementLoop | None = None
        if settings.hdfs.enabled:
            if namenode is None:
                raise ValueError("hdfs.enabled needs a NameNode source")
            self.hdfs = HdfsPlacementLoop(hdfs=settings.hdfs, harvesting=h, namenode=namenode, store=store,
                                          board=self.placement, metrics=metrics)
            hdfs = self.hdfs
            observers.append(lambda snapshot: hdfs.on_telemetry(snapshot.time))  # after the slot fold
        self.telemetry = RecordTelemetry(source, store, metrics, observers=observers,
                                         node_rows=settings.store.node_sample_rows)
        self.actuator = actuator if h.actuate else None
        self.refit = Refit(store, self.harvesting, metrics, h, self.resolved_nodes, horizon_s=reaction_horizon_s(settings),
                           poll_interval_s=settings.telemetry.poll_interval_s)
        st = settings.store
        m = settings.morpheus
        self.morpheus = MorpheusBoard(board)
        j = settings.jockey
        nudging = (m.enabled and m.actuate) or (j.enabled and j.actuate)
        self.nudges = NudgeChannel(actuator if nudging else None) if (m.enabled or j.enabled) and m.nudge.enabled else None
        self.guard = GuardTick(self.telemetry.latest, self.nodes, self.harvesting, self.actuator, metrics,
                               guard_strategy(h, telemetry_stale_after_s=settings.telemetry.stale_after_s),
                               record=store.append_decisions if st.decision_log_days > 0 else None,
                               nudges=self.nudges)
        no = h.node_ordering
        orderings = PublishNodeOrdering(self.harvesting, self.node_ordering, metrics,
                                        weights=selection_strategy(h).weights,
                                        queues={q: JobType(t) for q, t in no.queues.items()}, stale_after_s=no.stale_after_s,
                                        subclusters=self.node_ordering_subclusters)
        self.jobs = None if job_runs is None else RecordJobRuns(job_runs, store, self.harvesting, metrics, h,
                                                                 self.resolved_nodes)
        retention = PruneHistory(store, st.retention_days * DAY_S, metrics, raw_retention_s=st.raw_samples_retention_days * DAY_S,
                                 job_runs_retention_s=max(st.retention_days, h.job_length.history_days) * DAY_S,
                                 decisions_retention_s=st.decision_log_days * DAY_S,
                                 model_versions_kept=st.model_versions_kept)
        jobs_every = min(JOBS_INTERVAL_S, m.history.poll_interval_s) if m.enabled else JOBS_INTERVAL_S
        backoff = settings.telemetry.failure_backoff_max_s
        self.loops: list[LoopSpec] = [
            LoopSpec("telemetry", settings.telemetry.poll_interval_s, self.telemetry.tick,
                     backoff_max_s=settings.telemetry.failure_backoff_max_s),
            LoopSpec("refit", min(h.refit_interval_s, REFIT_CHECK_S), self.refit.tick),
            LoopSpec("guard", h.control_period_s, self.guard.tick),
            LoopSpec("node-ordering", h.control_period_s, orderings.tick),
            *([LoopSpec("jobs", jobs_every, self.jobs.tick, backoff_max_s=max(jobs_every, backoff),
                        retry_s=settings.telemetry.poll_interval_s)]
              if self.jobs is not None else []),
            *self._morpheus_loops(settings, store, metrics, reservations, reservation_actuator, provenance),
            *self._jockey_loops(settings, board, metrics, deadline_jobs, reservations,
                                deadline_actuator or reservation_actuator),
            LoopSpec("retention", st.prune_interval_s, retention.tick),
        ]
        if self.hdfs is not None:
            self.loops += [LoopSpec("hdfs-poll", settings.hdfs.poll_interval_s, self.hdfs.poll,
                                    backoff_max_s=max(settings.hdfs.poll_interval_s, backoff)),
                           LoopSpec("hdfs-refit", settings.hdfs.refit_interval_s, self.hdfs.refit)]

    def _morpheus_loops(self, settings: Settings, store: HistoryStore, metrics: Metrics,
                        observer: ReservationObserver | None, actuator: ReservationActuator | None,
                        provenance: ProvenanceSource | None) -> list[LoopSpec]:
        """Morpheus's loops (paper 002) when `morpheus.enabled` (resolved by the composition root)."""
        m = settings.morpheus
        self.morpheus_refit: MorpheusRefit | None = None
        self.morpheus_reservations: MorpheusReservations | None = None
        if not m.enabled:
            return []
        self.morpheus.publish_contracts(store.slo_contracts())
        specs = []
        if provenance is not None and provenance.sources():
            keep = max(settings.store.retention_days, m.history.window_days) * DAY_S
            ingest = IngestProvenance(provenance, store, self.morpheus, metrics, retention_s=keep)
            specs.append(LoopSpec("morpheus-ingest", m.provenance.poll_interval_s, ingest.tick))
        self.morpheus_refit = MorpheusRefit(m, store, self.morpheus, metrics)
        specs.append(LoopSpec("morpheus-refit", min(m.slo.refit_interval_s, MORPHEUS_REFIT_CHECK_S),
                              self.morpheus_refit.tick))
        if observer is not None:
            self.morpheus_reservations = MorpheusReservations(m, self.morpheus, observer, actuator, metrics, self.nudges)
            if self.nudges is not None:
                self.nudges.on_outcome = self.morpheus_reservations.on_nudge
            specs.append(LoopSpec("morpheus-reservations", m.reservations.control_period_s,
                                  self.morpheus_reservations.tick))
        return specs

    def _jockey_loops(self, settings: Settings, board: Board, metrics: Metrics, source: DeadlineJobSource | None,
                      observer: ReservationObserver | None, actuator: ReservationActuator | None) -> list[LoopSpec]:
        """Jockey's control loop (paper 001) when `jockey.enabled`; Morpheus's reservation loop,
        when it runs, owns the plan and coordinates (loop/jockey.py)."""
        j = settings.jockey
        self.jockey_board = JockeyBoard(board)
        self.jockey: JockeyControl | None = None
        if not j.enabled:
            return []
        if source is None or observer is None:
            raise ValueError("jockey.enabled needs the RM's apps and reservation list")
        self.jockey = JockeyControl(j, self.jockey_board, source, observer, actuator, metrics, default_loader(j),
                                    coordinator=self.morpheus_reservations, nudges=self.nudges,
                                    morpheus_prefix=settings.morpheus.reservations.name_prefix)
        return [LoopSpec("jockey", j.control_period_s, self.jockey.tick)]

    def resolved_nodes(self) -> dict[str, NodeStrategy]:
        """The harvested nodes as of the last poll (tenant and sizes, decisions/strategy.py)."""
        return self.nodes.resolve(self.telemetry.latest())[0]
