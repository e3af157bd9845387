"""A running Harvester with Morpheus on, against the emulated 3.3.6 RM over real HTTP (a SimClock
the test steps), with the history of one recurring job in its store: the rig of the Morpheus e2e,
admin-route, CLI and gRPC tests."""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.config import Settings, parse_settings
from harvester.emulator.demo_recurring import RecurringJob, recurring_history

from emu_cluster import EmuCluster

JOB = RecurringJob("it-etl", 300.0, 30.0, 2, 120.0, 10.0, 270.0)  # 5-minute period: window [60 s, 240 s)
PERIOD = 300.0
#: The admin bearer token of the rig's sidecar (sign-offs are admin writes, docs/security.md).
ADMIN_TOKEN = "morpheus-rig-admin-token-0123456789"


def emulator_settings(url: str, **sections: Any) -> Settings:
    """A sidecar on free loopback ports advising the emulated RM at `url` (`cluster.source: rm`),
    harvesting as a dry run with one tenant on its nodes, plus `sections` (whole sections)."""
    return parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
        "store": {"backend": "memory"},
        "cluster": {"source": "rm"},
        "rm": {"urls": [url], "user": "root", "max_retries": 0, "read_timeout_s": 5},
        "telemetry": {"poll_interval_s": 2, "stale_after_s": 30},
        "harvesting": {"actuate": False, "tenants": [{"tenant": "svc", "environment": "prod",
                                                      "hostname_pattern": "^localhost$"}],
                       "node_resources": {"physical_cores": 8}, "control_period_s": 1},
        **sections,
    }, environ={})


class Rig:
    def __init__(self, mode: str = "one_off", queues: Any = None, job: RecurringJob = JOB, **morpheus: Any) -> None:
        self.cluster = EmuCluster(start=1_795_430_000.0 + 20.0, queues=queues)
        self._dir = Path(tempfile.mkdtemp(prefix="morpheus-rig-"))
        self.token_file = self._dir / "admin.token"
        self.token_file.write_text(ADMIN_TOKEN + "\n")
        self.token_file.chmod(0o600)  # a token file open to others is refused
        settings = emulator_settings(
            self.cluster.url,
            server={"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2,
                    "auth": {"token_file": str(self.token_file)}},
            morpheus={"enabled": True, "reservations": {"mode": mode, "renew_lead_s": 120, "control_period_s": 5},
                      **morpheus})
        self.app = Harvester(settings, clock=self.cluster.clock, registry=CollectorRegistry())
        runs, accesses = recurring_history(self.cluster.clock.now(), jobs=(job,), origin="rm")
        self.app.store.append_job_runs(runs)
        self.app.store.append_provenance("it", accesses, [], None, self.cluster.clock.now())
        self.app.start(run_loops=False)
        self.every = {"telemetry": 2, "guard": 1, "morpheus-refit": 60, "morpheus-reservations": 5}
        self.elapsed = 0

    def step(self, seconds: int) -> None:
        """Advance 1 s at a time, ticking each loop at its interval (as its thread would)."""
        for _ in range(seconds):
            self.cluster.advance(1.0)
            self.elapsed += 1
            for name, every in self.every.items():
                if self.elapsed % every == 0 or self.elapsed == 1:
                    loop = self.app.loop(name)
                    assert loop.run_once() is not None, f"{name}: {loop.status()['last_error']}"

    def until(self, t: float) -> None:
        self.step(max(0, int(t - self.cluster.clock.now())))

    def admin(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://{self.app.admin.address}{path}", timeout=5) as r:
            return json.loads(r.read())

    def close(self) -> None:
        self.app.stop()
        self.cluster.close()
        if getattr(self, "_dir", None) is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
