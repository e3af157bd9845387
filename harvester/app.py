"""Composition root (DESIGN.md principle 1): the one place that names concrete classes.

`Harvester(settings)` builds, in data-flow order, the store, metrics, the ports (RM telemetry,
RM actuator, NameNode JMX), the state board, the control plane's loops (harvester/control.py:
the loop half of this root, which the simulator builds over simulated ports too) and the two
advice servers reading the board; `start()` starts them, `stop()` stops them in reverse within
the 5-second budget. Tests pass their own `clock`, `registry`, `source`, `actuator`, `store` and
`job_runs` (the simulator's ports: tests/sim/test_live_root.py runs this root's loops on them).

The embedded default (`cluster.source: embedded`) is the demo emulator: its tenant rules and
host size apply when `harvesting.tenants` / `node_resources.physical_cores` are unset, the
guard actuates against it unless `harvesting.actuate` is false, and the history store gets the
demo's SYNTHESIZED last 30 days of primary load (`DemoLoad.history_slots`) followed by an
immediate refit — never for `cluster.source: rm`. With Morpheus on (`morpheus.enabled`: null
means on for the embedded emulator, off for a real RM) the embedded demo also runs recurring
batch jobs, and the store gets their SYNTHESIZED past runs and provenance
(emulator/demo_recurring.py) followed by an immediate Morpheus refit, so reservations appear
within a minute of `make run`; with Jockey on (`jockey.enabled`: null likewise) the demo's deadline
job runs every 15 minutes in its user's reservation and Jockey drives it (emulator/demo_deadline.py).
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from prometheus_client import CollectorRegistry
from rm_client import RMClient, RMClientConfig
from rm_client.transport import spnego_auth

from harvester import __version__
from harvester.actuators.port import Actuator
from harvester.actuators.reservations import RMReservationActuator
from harvester.actuators.rm import RMActuator
from harvester.admin_token import serving_token
from harvester.advice.admin_http import Request, Response
from harvester.advice.constrained_placement import placement_services
from harvester.advice.explain import ExplainSources, LiveView, explain_routes
from harvester.advice.explain_subjects import builtin_explainers
from harvester.advice.advice_process import AdviceProcess
from harvester.advice.grpc_server import GrpcServer
from harvester.advice.harvesting_http import classes_document, nodes_document
from harvester.advice.hdfs_wiring import HDFS_SERVICE, hdfs_faces
from harvester.advice.jockey_http import WRITE_ROUTES as JOCKEY_WRITES, jockey_faces
from harvester.advice.long_poll import WaitSlots
from harvester.advice.metrics_http import metrics_route
from harvester.advice.morpheus_http import WRITE_ROUTES, morpheus_faces
from harvester.advice.slo_advisor import SERVICE as SLO_SERVICE
from harvester.advice.node_ordering_http import PATH as NODE_ORDERING_PATH, node_ordering_route
from harvester.advice.tls import grpc_server_credentials
from harvester.advice.whatif_http import PATH as WHATIF_PATH, WhatifRuns, whatif_command
from harvester.advice.yarn_advisor import yarn_advisor_service
from harvester.app_admin import RefitGate, admin_server, estimator_server, readiness
from harvester.board import Board
from harvester.clock import Clock, RealClock, ScaledClock
from harvester.config import Settings
from harvester.config_harvesting import HarvestingSettings, TenantRule
from harvester.config_morpheus import MorpheusSettings
from harvester.control import ControlPlane
from harvester.decisions.strategy import configured_physical_cores, guard_strategy, selection_strategy
from harvester.config_jockey import JockeySettings
from harvester.emulator import demo, demo_deadline, demo_recurring
from harvester.emulator.dynamics import Timing
from harvester.emulator.server import EmulatorServer
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore
from harvester.emulator.workloads import Workload
from harvester.loop.job_runs import JobRunSource
from harvester.loop.morpheus_reservations import ReservationActuator, ReservationObserver
from harvester.loop.runner import ControlLoop
from harvester.models.job_names import NameNormalizer
from harvester.models.tenant_slots import slot_start
from harvester.config_server import MIB
from harvester.observability.metrics import Metrics
from harvester.rm_connect import rm_client_config
from harvester.subclusters import (
    FederatedJobRuns, FederatedSource, RoutingActuator, SubCluster, federated, qualify, status as subclusters_status,
    subclusters,
)
from harvester.telemetry.namenode_jmx import NameNodeJmxClient
from harvester.telemetry.provenance_tail import ProvenanceFiles
from harvester.telemetry.rm import RMTelemetrySource
from harvester.telemetry.rm_deadline_jobs import RMDeadlineJobs
from harvester.telemetry.rm_jobs import RMJobRuns
from harvester.telemetry.rm_reservations import RMReservationView
from harvester.telemetry.source import TelemetrySource

LOOPS_STOP_S = 2.0  # all loops together, on stop

log = logging.getLogger(__name__)


def open_store(settings: Settings) -> HistoryStore:
    """The SQLite history store: the configured file, or `:memory:` for `store.backend: memory`."""
    return SqliteHistoryStore(":memory:" if settings.store.backend == "memory" else settings.store.path)


def harvesting_settings(settings: Settings) -> HarvestingSettings:
    """The `harvesting:` section with the embedded default's choices applied (module docstring).

    `actuate: null` means true for the embedded emulator and false for a real RM; with the
    emulator and no tenant rules, the demo's hostname rules (^web-, ^search-, ^db-, ^etl-) and
    its host size (8 physical cores) are used.
    """
    h = settings.harvesting
    embedded = settings.cluster.source == "embedded"
    updates: dict[str, Any] = {}
    if h.actuate is None:
        updates["actuate"] = embedded
    if embedded and not h.tenants:
        updates["tenants"] = [TenantRule(tenant=t, environment="demo", hostname_pattern=demo.hostname_pattern(t))
                              for t in demo.TENANTS]
    if embedded and h.node_resources.physical_cores is None:
        updates["node_resources"] = h.node_resources.model_copy(update={"physical_cores": demo.CORES})
    return h.model_copy(update=updates) if updates else h


def morpheus_settings(settings: Settings, *, embedded: bool | None = None) -> MorpheusSettings:
    """The `morpheus:` section with `enabled: null` resolved: on for the embedded emulator only
    (`embedded`: whether it really runs; default: `cluster.source` says so)."""
    m = settings.morpheus
    if m.enabled is None:
        on = settings.cluster.source == "embedded" if embedded is None else embedded
        return m.model_copy(update={"enabled": on})
    return m


def jockey_settings(settings: Settings, *, embedded: bool | None = None, demo_dir: Path | None = None) -> JockeySettings:
    """The `jockey:` section with `enabled: null` resolved like Morpheus's; the embedded demo
    with no job gets the demo's deadline job (emulator/demo_deadline.py), its prior runs written
    in `demo_dir` (`Harvester` passes the state directory, or a temporary one it removes)."""
    j = settings.jockey
    on = j.enabled if j.enabled is not None else (settings.cluster.source == "embedded" if embedded is None else embedded)
    j = j.model_copy(update={"enabled": on})
    if not (on and embedded):
        return j
    if demo_dir is None:
        raise ValueError("the embedded demo's Jockey job needs a directory for its prior runs (demo_files_dir)")
    return demo_deadline.with_demo_job(j, demo_dir)


def demo_files_dir(settings: Settings) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """Where the embedded demo's files go: `demo/` beside the SQLite store (the state directory;
    one per store, rewritten at each start), or with the memory store — nothing on disk promised —
    a temporary directory, returned so that `stop()` removes it (issue 25: one was left in the
    system temp directory per start)."""
    if settings.store.backend == "sqlite":
        where = Path(settings.store.path).parent / "demo"
        where.mkdir(parents=True, exist_ok=True)
        return where, None
    tmp = tempfile.TemporaryDirectory(prefix="harvester-demo-jockey-")
    return Path(tmp.name), tmp


def name_rule(m: MorpheusSettings) -> NameNormalizer:
    """The recurring-name rule of `morpheus.history.name_rules` (one job identity for every loop)."""
    return NameNormalizer((r.pattern, r.replace) for r in m.history.name_rules)


def rm_source(h: HarvestingSettings, client: RMClient, name: str = "rm", node_prefix: str = "") -> RMTelemetrySource:
    """Containers are listed only when the guard picks victims itself (signals modes)."""
    return RMTelemetrySource(
        client,
        name=name,
        node_prefix=node_prefix,
        list_containers=h.guard.kill_mechanism != "rm_overcommit",
        physical_cores=lambda node_id, hostname: configured_physical_cores(h, node_id, hostname),
    )


def start_embedded_cluster(settings: Settings, clock: Clock,
                           timing: Timing | None = None) -> tuple[EmulatorServer, demo.DemoLoad]:
    """The embedded default: the YARN emulator with the demo cluster, on `clock` (`timing`: its
    NM and RM intervals, Hadoop's by default; harvester/emulated_week.py takes coarser ones)."""
    host, _, port = settings.embedded.listen.rpartition(":")
    load = demo.DemoLoad(seed=settings.embedded.seed, start=clock.now(), nodes_per_tenant=settings.embedded.nodes_per_tenant)
    emu = demo.build_demo(clock, seed=settings.embedded.seed, nodes_per_tenant=settings.embedded.nodes_per_tenant,
                          load=load, timing=timing)
    if morpheus_settings(settings).enabled:
        demo_recurring.schedule_recurring(Workload(emu), clock.now(), seed=settings.embedded.seed)
    if jockey_settings(settings).enabled and not settings.jockey.jobs:
        demo_deadline.schedule_deadline_job(Workload(emu), clock.now())
    return EmulatorServer(emu, host, int(port)), load


def rm_client_for(settings: Settings, embedded: EmulatorServer | None = None, *, writes: bool = False) -> RMClient:
    """A client of the RM Harvester advises: a real one, or the embedded emulator over HTTP.
    `writes`: a client that never retries (for writes that change the cluster, principle 16)."""
    if settings.cluster.source == "embedded":
        if embedded is None:
            raise ValueError("cluster.source embedded needs the embedded emulator")
        return RMClient(RMClientConfig(urls=(embedded.url,), user=settings.rm.user, max_retries=0 if writes else 1))
    return subcluster_client(settings, subclusters(settings)[0], writes=writes)  # several: the first (config.py)


def subcluster_client(settings: Settings, sc: SubCluster, *, writes: bool = False) -> RMClient:
    """A client of one sub-cluster's RM (rm.clusters entry, or the `rm:` section itself)."""
    config = rm_client_config(sc.rm, settings.kerberos)
    return RMClient(dataclasses.replace(config, max_retries=0) if writes else config)


def build_source(settings: Settings, embedded: EmulatorServer | None = None, metrics: Metrics | None = None) -> TelemetrySource:
    """The RM the sidecar polls: a real one, the embedded emulator over real HTTP, or with
    `rm.clusters` every sub-cluster's RM (harvester/subclusters.py)."""
    if federated(settings):
        h = harvesting_settings(settings)
        return FederatedSource({sc.name: rm_source(h, subcluster_client(settings, sc), name=sc.name,
                                                   node_prefix=qualify(sc.name, ""))
                                for sc in subclusters(settings)}, metrics or Metrics(), prequalified=True,
                               wait_s=settings.telemetry.poll_interval_s)
    name = "embedded" if settings.cluster.source == "embedded" else "rm"
    return rm_source(harvesting_settings(settings), rm_client_for(settings, embedded), name=name)


def backfill_demo_history(store: HistoryStore, load: demo.DemoLoad, now: float, h: HarvestingSettings) -> int:
    """SYNTHESIZED DEMO HISTORY (embedded emulator only): the demo's own primary load of the
    `window_days` before `now`, at `sample_step_s` slots, written where the store has no slot yet.
    Never called for a real RM: there, history is only what telemetry observed."""
    rows = load.history_slots(now, step_s=h.sample_step_s, days=h.window_days)
    if not rows:
        return 0
    have = {(s.start, s.tenant) for s in store.tenant_slots(since=rows[0].start, until=slot_start(now, h.sample_step_s))}
    return store.add_tenant_slots([r for r in rows if (r.start, r.tenant) not in have])


def backfill_demo_recurring(store: HistoryStore, now: float, seed: int) -> int:
    """SYNTHESIZED DEMO HISTORY (embedded emulator with Morpheus only): the demo's recurring jobs'
    past runs with their skylines and provenance (emulator/demo_recurring.py), written once (a
    store that already holds them is left alone). Never called for a real RM."""
    runs, accesses = demo_recurring.recurring_history(now, seed=seed)
    have = {r.app_id for r in store.job_runs(since=0.0)}
    if any(r.app_id in have for r in runs):
        return 0
    store.append_job_runs(runs)
    return len(runs) + store.append_provenance("synthesized-demo", accesses, [], None, now)


def whatif_runs(settings: Settings, config_path: Path | None, now: Any) -> WhatifRuns:
    """`harvester whatif` from the running sidecar: on its settings file (or its store), each run
    in `var/whatif/<time>` under the directory the sidecar started in."""
    memory = settings.store.backend == "memory"
    store = None if memory else Path(settings.store.path)
    return WhatifRuns(whatif_command(None if config_path is None else Path(config_path).resolve(), store), Path("var", "whatif").resolve(), now,
                      unavailable="store.backend is memory: no store on disk for another process to replay"
                      if memory else None)


#: Why the contract's services without an implementation answer UNIMPLEMENTED.
UNIMPLEMENTED_WHY = {
    "harvester.v1.ConstrainedPlacement": "constraint-aware placement is disabled (placement.enabled: false)",
}


class Harvester:
    """One running sidecar."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        source: TelemetrySource | None = None,
        actuator: Actuator | None = None,
        store: HistoryStore | None = None,
        job_runs: JobRunSource | None = None,
        reservations: ReservationObserver | None = None,
        reservation_actuator: ReservationActuator | None = None,
        emulator_timing: Timing | None = None,
        config_path: Path | None = None,
    ) -> None:
        self.settings = settings
        h = self.harvesting = harvesting_settings(settings)
        speed = settings.embedded.speed if settings.cluster.source == "embedded" else 1.0
        self.clock = clock or (RealClock() if speed == 1.0 else ScaledClock(speed))
        self.embedded: EmulatorServer | None = None
        demo_load: demo.DemoLoad | None = None
        if source is None and settings.cluster.source == "embedded":
            self.embedded, demo_load = start_embedded_cluster(settings, self.clock, emulator_timing)
        m = self.morpheus_settings = morpheus_settings(settings, embedded=self.embedded is not None)
        self.metrics = Metrics(registry)
        # before anything starts: a bad one stops here; the embedded default makes a local one
        token = serving_token(settings.server.auth.token_file, embedded=settings.cluster.source == "embedded")
        self.store = store if store is not None else open_store(settings)
        self.source = source or build_source(settings, self.embedded, self.metrics)
        self._demo_tmp: tempfile.TemporaryDirectory[str] | None = None
        demo_dir = None
        if self.embedded is not None:
            demo_dir, self._demo_tmp = demo_files_dir(settings)
        j = self.jockey_settings = jockey_settings(settings, embedded=self.embedded is not None, demo_dir=demo_dir)
        if (h.actuate or ((m.enabled and m.actuate) or (j.enabled and j.actuate)) and m.nudge.enabled) and actuator is None:
            # nudges use it too; every action's deadline: the guard's staleness limit, its period
            def rm_actuator(client: RMClient) -> RMActuator:
                return RMActuator(client, self.clock, budget_s=h.control_period_s, metrics=self.metrics,
                                  stale_after_s=guard_strategy(h, telemetry_stale_after_s=settings.telemetry.stale_after_s).stale_after_s)
            actuator = RoutingActuator({sc.name: rm_actuator(subcluster_client(settings, sc)) for sc in subclusters(settings)},
                                       self.metrics) if federated(settings) else rm_actuator(rm_client_for(settings, self.embedded))
        self._routing = actuator
        s = settings.hdfs
        self._namenode = None if not s.enabled else NameNodeJmxClient(
            [str(u) for u in s.namenode_urls], connect_timeout_s=s.connect_timeout_s, read_timeout_s=s.read_timeout_s,
            tls_verify=str(s.ca_bundle) if s.ca_bundle else s.tls_verify, max_response_bytes=int(s.max_response_mb * MIB),
            auth=spnego_auth(settings.kerberos.principal, str(settings.kerberos.keytab or "") or None)
            if s.auth == "kerberos" else None)
        normalize = name_rule(m)
        if job_runs is None and source is None:  # job runs come from the same RM's /apps
            job_runs = FederatedJobRuns({sc.name: RMJobRuns(subcluster_client(settings, sc), normalize, step_s=m.step_s)
                                         for sc in subclusters(settings)}) if federated(settings) else \
                RMJobRuns(rm_client_for(settings, self.embedded), normalize, step_s=m.step_s)
        deadline_jobs = RMDeadlineJobs(rm_client_for(settings, self.embedded), normalize) \
            if j.enabled and source is None else None  # Jockey's running apps, from the same RM
        deadline_actuator = RMReservationActuator(rm_client_for(settings, self.embedded, writes=True), self.clock.now,
                                                  stale_after_s=j.action_stale_after_s) \
            if j.enabled and source is None else reservation_actuator
        if (m.enabled or j.enabled) and reservations is None and source is None:  # the same RM's reservation system
            reservations = RMReservationView(rm_client_for(settings, self.embedded), normalize)
            reservation_actuator = RMReservationActuator(rm_client_for(settings, self.embedded, writes=True),
                                                         self.clock.now,
                                                         stale_after_s=m.reservations.action_stale_after_s)
        p = m.provenance
        provenance = ProvenanceFiles(audit_log=p.audit_log, jsonl=p.jsonl, tz=ZoneInfo(p.audit_log_tz),
                                     max_lines=p.max_lines_per_poll) if m.enabled and (p.audit_log or p.jsonl) else None
        # the loops (data-flow order) publish on the board; the advice servers read it
        self.board = Board()
        self.control = ControlPlane(settings.model_copy(update={"harvesting": h, "morpheus": m, "jockey": j}), self.board,
                                    source=self.source, store=self.store, metrics=self.metrics, actuator=actuator,
                                    job_runs=job_runs, namenode=self._namenode, reservations=reservations,
                                    reservation_actuator=reservation_actuator, provenance=provenance,
                                    deadline_jobs=deadline_jobs, deadline_actuator=deadline_actuator,
                                    subclusters=[sc.name for sc in subclusters(settings)] if federated(settings) else ())
        self.actuator = self.control.actuator
        self.state, self.telemetry, self.refit, self.guard = (self.control.harvesting, self.control.telemetry,
                                                              self.control.refit, self.control.guard)
        if demo_load is not None:
            backfill_demo_history(self.store, demo_load, self.clock.now(), h)
            self.refit.request()  # the first refit tick (at start) classifies the demo tenants at once
            if self.control.morpheus_refit is not None:
                backfill_demo_recurring(self.store, self.clock.now(), settings.embedded.seed)
                self.control.morpheus_refit.request()
        self.loops = [ControlLoop(spec.name, spec.interval_s, spec.tick, self.clock, self.metrics,
                                  backoff_max_s=spec.backoff_max_s, retry_s=spec.retry_s) for spec in self.control.loops]
        slots = WaitSlots(settings.server.admin_http.max_long_polls)  # shared by every long-poll route
        self.hdfs = hdfs_faces(settings.hdfs, self.control.placement, self.store, self.metrics, slots=slots)
        # the RM plug-in's node orders (GET /v1/yarn/node-ordering, gRPC GetNodeOrdering)
        orderings = self.control.node_ordering
        services = [yarn_advisor_service(self.state, self.metrics, selection=selection_strategy(h), orderings=orderings,
                                         subclusters=self.control.node_ordering_subclusters),
                    *([self.hdfs.service] if self.hdfs.service else [])]
        services += placement_services(self.telemetry.latest, self.clock, settings, self.metrics)
        self.jockey = jockey_faces(j, self.control.jockey_board)
        self.morpheus = morpheus_faces(m, self.control.morpheus, self.store, self.metrics, self.clock.now,
                                       deadline_control=self.jockey.deadline_control)
        services += [self.morpheus.service] if self.morpheus.service else []
        why = {**UNIMPLEMENTED_WHY, HDFS_SERVICE: self.hdfs.unimplemented_reason,
               SLO_SERVICE: self.morpheus.unimplemented_reason}
        srv = settings.server
        self.grpc: GrpcServer | AdviceProcess
        if srv.grpc_advice_process:  # SelectClasses answered by a process that runs no loop (issue 29)
            self.grpc = AdviceProcess(
                srv.grpc_listen, self.metrics, services, self.state, selection=selection_strategy(h), tls=srv.tls,
                max_workers=srv.grpc_max_workers, max_message_bytes=srv.grpc_max_message_bytes,
                unimplemented_reason=lambda name: why.get(name) or "not implemented in this release",
                log_level=settings.logging.level, log_format=settings.logging.format, cpus=frozenset(srv.grpc_advice_cpus))
        else:
            self.grpc = GrpcServer(
                srv.grpc_listen, self.metrics, services, max_workers=srv.grpc_max_workers,
                unimplemented_reason=lambda name: why.get(name) or "not implemented in this release",
                credentials=grpc_server_credentials(srv.tls), max_message_bytes=srv.grpc_max_message_bytes,
            )
        self.admin = admin_server(settings, self.metrics, token)
        # the Hadoop Resource Estimator's REST API on its own port, from the same store
        self.estimator = estimator_server(settings, self.store, self.metrics, token, self.clock.now) \
            if settings.estimator.enabled else None
        self._refit_gate = RefitGate(h.refit_min_interval_s)
        self.admin.route("/healthz", lambda req: Response.text(200, "ok\n"), blocking=False)
        self.admin.route("/readyz", self._readyz, blocking=False)
        self.admin.route("/metrics", metrics_route(self.metrics, max_age_s=settings.server.admin_http.metrics_max_age_s))
        self.admin.route("/status", lambda req: Response.json(200, self.status()))
        self.admin.route("/v1/harvesting/classes", lambda req: Response.json(200, self.classes()))
        self.admin.route("/v1/harvesting/nodes", self._nodes)
        self.admin.route("/v1/harvesting/refit", self._refit, methods=("POST",))
        for path, handler in self.hdfs.routes.items():
            self.admin.route(path, handler)
        for path, handler in {**self.morpheus.routes, **self.jockey.routes}.items():
            self.admin.route(path, handler, methods=("POST",) if path in WRITE_ROUTES + JOCKEY_WRITES else ("GET",))
        self.admin.route(NODE_ORDERING_PATH, node_ordering_route(
            orderings, max_wait_s=h.node_ordering.long_poll_max_s, slots=slots, subclusters=self.control.node_ordering_subclusters,
            waiters=lambda delta: self.metrics.record_advice_waiters("node_ordering", delta)))
        # `harvester explain KIND ID`: the last decisions on a node / tenant / job, and why
        self.explainers = builtin_explainers()
        for path, handler in explain_routes(self.explainers, self.explain_sources).items():
            self.admin.route(path, handler)
        # POST/GET /v1/whatif: `harvester whatif` on this store in a separate process (advice/whatif_http.py)
        self.whatif = whatif_runs(settings, config_path, self.clock.now)
        self.admin.route(WHATIF_PATH, self.whatif.handle, methods=("GET", "POST"))
        self._started_at: float | None = None
        self._stopped = threading.Event()

    def loop(self, name: str) -> ControlLoop:
        """The control loop called `name` (tests step loops with `run_once` on a SimClock)."""
        return next(loop for loop in self.loops if loop.name == name)

    # --- lifecycle ------------------------------------------------------------------------

    def start(self, *, run_loops: bool = True) -> None:
        """Start serving; `run_loops=False` leaves the loops to the caller (`loop(name).run_once()`,
        e.g. tests on a `SimClock`, whose `wait` never blocks)."""
        self._started_at = self.clock.now()
        if self.embedded is not None:
            self.embedded.start()
        self.grpc.start()
        self.admin.start()
        if self.estimator is not None:
            self.estimator.start()
        for loop in self.loops if run_loops else ():
            loop.start()
        log.info(
            "harvester serving",
            extra={"grpc": self.grpc.address, "grpc_tls": self.grpc.tls, "admin": self.admin.url, "source": self.source.name,
                   "admin_writes": "token" if self.admin.auth.has_token else "refused (no token)"},
        )

    def stop(self) -> None:
        """Stop everything; the gRPC grace period is the only wait that can take seconds."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for loop in self.loops:
            loop._stop.set()  # signal all first so they wind down in parallel
        # one shared deadline: a loop busy in a refit (numpy, not interruptible) must not add a
        # second per loop to the shutdown on a loaded machine; its thread is a daemon
        deadline = time.monotonic() + LOOPS_STOP_S
        for loop in reversed(self.loops):
            if not loop.stop(timeout_s=max(0.0, deadline - time.monotonic())):
                log.warning("loop did not stop in time", extra={"loop": loop.name})
        self.whatif.stop()  # a what-if run still going does not outlive its sidecar
        self.board.close()  # wakes long-polls and watch streams before the servers stop
        if self._namenode is not None:
            self._namenode.close()
        for part in (self.source, self._routing):  # rm.clusters: their worker threads
            if isinstance(part, (FederatedSource, RoutingActuator)):
                part.close()
        self.grpc.stop(self.settings.server.shutdown_grace_s)
        self.admin.stop()
        if self.estimator is not None:
            self.estimator.stop()
        if self.embedded is not None:
            self.embedded.stop()
        if self._demo_tmp is not None:
            self._demo_tmp.cleanup()
        self.store.close()
        log.info("harvester stopped")

    # --- read side ------------------------------------------------------------------------

    def ready(self) -> tuple[bool, list[str]]:
        doc = readiness(self.loops, self.clock.now())
        return doc["ready"], doc["problems"]

    def _readyz(self, req: Request) -> Response:
        doc = readiness(self.loops, self.clock.now())
        if isinstance(self.grpc, AdviceProcess) and not self.grpc.alive:
            doc["ready"] = False
            doc["problems"].append("the gRPC advice process is not running (being started again)")
        return Response.json(200 if doc["ready"] else 503, doc)

    def classes(self) -> dict[str, Any]:
        view = self.state.view()
        return classes_document(view.model, view.reserves, view.class_nodes, view.classes)

    def _nodes(self, req: Request) -> Response:
        try:
            actions = int(req.query.get("actions", ["50"])[0])
        except ValueError:
            return Response.json(400, {"error": "actions must be an integer"})
        return Response.json(200, nodes_document(self.state.view().guard, self.state.guard_status(), actions=actions))

    def explain_sources(self) -> ExplainSources:
        """What `harvester explain` reads in this sidecar: its settings, store and board, now."""
        snap = self.telemetry.latest()
        # the resolved settings (embedded default's Morpheus / Jockey sections), as the loops run them
        return ExplainSources(self.control.settings, self.harvesting, self.clock.now(), self.store,
                              LiveView(self.state.view(), self.state.guard_status(), None if snap is None else snap.time,
                                       self.control.morpheus.reservations(), self.control.jockey_board.control(),
                                       self.control.morpheus.model()))

    def _refit(self, req: Request) -> Response:
        """POST /v1/harvesting/refit: refit now (in a worker thread), answer the new classes; at
        most once per harvesting.refit_min_interval_s (429 + Retry-After sooner)."""
        wait = self._refit_gate.admit()
        if wait is not None:
            self.metrics.record_admin_refused("refit_rate")
            return Response.json(429, {"error": f"a refit ran less than {self._refit_gate.min_interval_s:g}s ago; "
                                                f"retry in {wait:.0f}s (harvesting.refit_min_interval_s)"},
                                 {"Retry-After": str(max(1, int(wait + 0.999)))})
        self.refit.request()
        loop = self.loop("refit")
        result = loop.run_once()
        if result is None:
            return Response.json(500, {"error": loop.status()["last_error"]})
        return Response.json(200, {"refit": dict(result.summary), **self.classes()})

    def status(self) -> dict[str, Any]:
        now = self.clock.now()
        age = self.telemetry.age(now)
        model = self.state.view().model
        subcluster_status = [{"name": "default", "rm_url": [self.embedded.url]}] if self.embedded \
            else subclusters_status(self.settings, self.source, self.clock)
        return {
            "version": __version__,
            "now": now,
            "started_at": self._started_at,
            "uptime_s": None if self._started_at is None else now - self._started_at,
            "cluster": {
                "source": self.source.name,
                "rm_url": self.embedded.url if self.embedded else [u for sc in subcluster_status for u in sc["rm_url"]],
                "subclusters": subcluster_status,
                "telemetry_age_s": age,
            },
            "store": {
                "backend": self.settings.store.backend,
                "path": str(self.settings.store.path) if self.settings.store.backend == "sqlite" else None,
                "schema_version": self.store.schema_version(),
            },
            "harvesting": {
                "actuate": self.actuator is not None,
                "kill_mechanism": self.harvesting.guard.kill_mechanism,
                "model_version": None if model is None else model.version,
                "tenant_rules": len(self.harvesting.tenants),
            },
            "hdfs": self.hdfs.status(),
            "morpheus": self.morpheus.status(),
            "jockey": self.jockey.status(),
            "grpc": {"address": self.grpc.address, "tls": self.grpc.tls, "services": self.grpc.services,
                     **({"advice_process": self.grpc.status()} if isinstance(self.grpc, AdviceProcess) else {})},
            "admin": {"address": self.admin.address, "url": self.admin.url, "writes": "token" if self.admin.auth.has_token
                      else "refused (no token configured)", "public_reads": list(self.admin.auth.public_reads)},
            "estimator": None if self.estimator is None else {
                "url": self.estimator.url, "writes": "open" if self.estimator.auth.public_writes
                else "token" if self.estimator.auth.has_token else "refused (no token configured)"},
            "loops": [loop.status() for loop in self.loops],
        }
