"""A small emulated cluster over real HTTP for the harvesting loop, actuator and e2e tests.

Like the recorded pseudo-cluster (fixtures/yarn-3.3.6/scenarios): NodeManagers of 8192 MB /
8 vcores, by default two of them (`localhost:45454`, `localhost:45455`) on ONE 2-core host, so
both report the whole host's CPU. The emulator runs on a `SimClock` and is served by an
`EmulatorServer` on loopback; `client` is an `rm_client.RMClient` talking real HTTP to it.
Tests move time with `advance(s)`; every HTTP request catches the emulator up to the clock.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from rm_client import RMClient, RMClientConfig

from harvester.clock import SimClock
from harvester.domain import Resources
from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer, Workload
from harvester.emulator.queues import QueueConfig

T0 = 1_795_430_000.0
N1, N2 = "localhost:45454", "localhost:45455"


class EmuCluster:
    def __init__(self, nodes: Sequence[str] = (N1, N2), *, total: Resources = Resources(8192, 8),
                 cores: float = 2.0, start: float = T0, queues: tuple[QueueConfig, ...] | None = None) -> None:
        self.clock = SimClock(start=start)
        cfg = EmulatorConfig(cluster_ts_ms=int(start * 1000))
        self.emu = Emulator(self.clock, cfg if queues is None else replace(cfg, queues=queues))
        self.work = Workload(self.emu)
        self.work.add_nodes(list(nodes), total, cores, host_memory_mb=24576.0, base_memory_mb=700.0)
        self.server = EmulatorServer(self.emu).start()
        self.client = RMClient(RMClientConfig(urls=(self.server.url,), user="root", max_retries=0))

    @property
    def url(self) -> str:
        return self.server.url

    def advance(self, seconds: float) -> float:
        """Move the clock and let the emulator catch up (heartbeats, samples, kills)."""
        now = self.clock.advance(seconds)
        self.emu.sync()
        return now

    def close(self) -> None:
        self.client.close()
        self.server.stop()

    def __enter__(self) -> EmuCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
