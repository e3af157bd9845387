"""Composition root (DESIGN.md principle 1): the one place that names concrete classes.

`Harvester(settings)` builds the store, metrics, telemetry source, control loops and the two
advice servers, in data-flow order; `start()` starts them, `stop()` stops them in reverse
within the 5-second budget. Tests pass their own `clock`, `registry` and `source`.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from prometheus_client import CollectorRegistry
from rm_client import RMClient, RMClientConfig

from harvester import __version__
from harvester.advice.admin_http import AdminServer, Request, Response
from harvester.advice.grpc_server import GrpcServer
from harvester.clock import Clock, RealClock, ScaledClock
from harvester.config import RMSettings, Settings
from harvester.decisions.strategy import configured_physical_cores
from harvester.history.memory import MemoryHistoryStore
from harvester.history.sqlite import SqliteHistoryStore
from harvester.history.store import HistoryStore
from harvester.loop.record_telemetry import RecordTelemetry
from harvester.loop.retention import PruneHistory
from harvester.loop.runner import ControlLoop
from harvester.observability.metrics import CONTENT_TYPE, Metrics
from harvester.sim.emulator.demo import build_demo
from harvester.sim.emulator.server import EmulatorServer
from harvester.telemetry.rm import RMTelemetrySource
from harvester.telemetry.source import TelemetrySource

log = logging.getLogger(__name__)


def open_store(settings: Settings) -> HistoryStore:
    if settings.store.backend == "memory":
        return MemoryHistoryStore()
    return SqliteHistoryStore(settings.store.path)


def rm_client_config(rm: RMSettings) -> RMClientConfig:
    """The `rm:` settings as rm_client's config (a CA bundle implies verification)."""
    return RMClientConfig(
        urls=tuple(str(u) for u in rm.urls),
        user=rm.user,
        connect_timeout_s=rm.connect_timeout_s,
        read_timeout_s=rm.read_timeout_s,
        max_retries=rm.max_retries,
        backoff_base_s=rm.backoff_base_s,
        backoff_max_s=rm.backoff_max_s,
        auth=rm.auth,
        tls_verify=str(rm.ca_bundle) if rm.ca_bundle else rm.tls_verify,
    )


def rm_source(settings: Settings, client: RMClient, name: str = "rm") -> RMTelemetrySource:
    """Containers are listed only when the guard picks victims itself (signals modes)."""
    h = settings.harvesting
    return RMTelemetrySource(
        client,
        name=name,
        list_containers=h.guard.kill_mechanism != "rm_overcommit",
        physical_cores=lambda node_id, hostname: configured_physical_cores(h, node_id, hostname),
    )


def embedded_rm_url(settings: Settings) -> str:
    """Where the built-in emulator answers (the configured address; port 0 is resolved at start)."""
    return f"http://{settings.embedded.listen}"


def start_embedded_cluster(settings: Settings, clock: Clock) -> EmulatorServer:
    """The embedded default: the YARN emulator with the demo cluster, on `clock`."""
    host, _, port = settings.embedded.listen.rpartition(":")
    emu = build_demo(clock, seed=settings.embedded.seed, nodes_per_tenant=settings.embedded.nodes_per_tenant)
    return EmulatorServer(emu, host, int(port))


def build_source(settings: Settings, embedded: EmulatorServer | None = None) -> TelemetrySource:
    """The RM the sidecar polls: a real one, or the embedded emulator over real HTTP."""
    if settings.cluster.source == "embedded":
        if embedded is None:
            raise ValueError("cluster.source embedded needs the embedded emulator")
        config = RMClientConfig(urls=(embedded.url,), user=settings.rm.user, max_retries=1)
        return rm_source(settings, RMClient(config), name="embedded")
    return rm_source(settings, RMClient(rm_client_config(settings.rm)))


class Harvester:
    """One running sidecar."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        source: TelemetrySource | None = None,
    ) -> None:
        self.settings = settings
        speed = settings.embedded.speed if settings.cluster.source == "embedded" else 1.0
        self.clock = clock or (RealClock() if speed == 1.0 else ScaledClock(speed))
        self.embedded: EmulatorServer | None = None
        if source is None and settings.cluster.source == "embedded":
            self.embedded = start_embedded_cluster(settings, self.clock)
        self.metrics = Metrics(registry)
        self.store = open_store(settings)
        self.source = source or build_source(settings, self.embedded)
        self.telemetry = RecordTelemetry(self.source, self.store, self.metrics)
        self.loops = [
            ControlLoop("telemetry", settings.telemetry.poll_interval_s, self.telemetry, self.clock, self.metrics),
            ControlLoop(
                "retention",
                settings.store.prune_interval_s,
                PruneHistory(self.store, settings.store.retention_days * 86400.0, self.metrics),
                self.clock,
                self.metrics,
            ),
        ]
        self.grpc = GrpcServer(settings.server.grpc_listen, self.metrics, max_workers=settings.server.grpc_max_workers)
        self.admin = AdminServer(settings.server.admin_listen)
        self.admin.route("/healthz", lambda req: Response.text(200, "ok\n"))
        self.admin.route("/readyz", self._readyz)
        self.admin.route("/metrics", lambda req: Response(200, self.metrics.exposition(), CONTENT_TYPE))
        self.admin.route("/status", lambda req: Response.json(200, self.status()))
        self._started_at: float | None = None
        self._stopped = threading.Event()

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._started_at = self.clock.now()
        if self.embedded is not None:
            self.embedded.start()
        self.grpc.start()
        self.admin.start()
        for loop in self.loops:
            loop.start()
        log.info(
            "harvester serving",
            extra={"grpc": self.grpc.address, "admin": f"http://{self.admin.address}", "source": self.source.name},
        )

    def stop(self) -> None:
        """Stop everything; the gRPC grace period is the only wait that can take seconds."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        for loop in self.loops:
            loop._stop.set()  # signal all first so they wind down in parallel
        for loop in reversed(self.loops):
            if not loop.stop(timeout_s=1.0):
                log.warning("loop did not stop in time", extra={"loop": loop.name})
        self.grpc.stop(self.settings.server.shutdown_grace_s)
        self.admin.stop()
        if self.embedded is not None:
            self.embedded.stop()
        self.store.close()
        log.info("harvester stopped")

    # --- read side ------------------------------------------------------------------------

    def ready(self) -> tuple[bool, list[str]]:
        now = self.clock.now()
        problems = [why for ok, why in (loop.healthy(now) for loop in self.loops) if not ok]
        return not problems, problems

    def _readyz(self, req: Request) -> Response:
        ok, problems = self.ready()
        return Response.json(200 if ok else 503, {"ready": ok, "problems": problems})

    def status(self) -> dict[str, Any]:
        now = self.clock.now()
        age = self.telemetry.age(now)
        return {
            "version": __version__,
            "now": now,
            "started_at": self._started_at,
            "uptime_s": None if self._started_at is None else now - self._started_at,
            "cluster": {
                "source": self.source.name,
                "rm_url": self.embedded.url if self.embedded else [str(u) for u in self.settings.rm.urls],
                "telemetry_age_s": age,
            },
            "store": {
                "backend": self.settings.store.backend,
                "path": str(self.settings.store.path) if self.settings.store.backend == "sqlite" else None,
                "schema_version": self.store.schema_version(),
            },
            "grpc": {"address": self.grpc.address, "services": self.grpc.services},
            "admin": {"address": self.admin.address},
            "loops": [loop.status() for loop in self.loops],
        }
