"""Several emulated ResourceManagers at once: YARN Federation sub-clusters (or separate
clusters) for tests and demos of `rm.clusters` (harvester/subclusters.py).

Each sub-cluster is its own `Emulator` (its own cluster timestamp, so container and app ids
differ between RMs as real ones do) served by its own `EmulatorServer` on its own port, with the
SAME node ids in every one by default (`nm-00000:45454`, ...): exactly the collision the
sidecar's qualified ids (`name/host:port`) must keep apart in its one store. `harvester emulator
serve --subclusters a,b` runs them alone (cli_emulator.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from harvester.clock import Clock
from harvester.domain import Resources
from harvester.emulator.server import EmulatorServer
from harvester.emulator.state import Emulator, EmulatorConfig
from harvester.emulator.workloads import Workload

#: Each sub-cluster's RM started this much later than the previous one (distinct cluster timestamps).
TS_STEP_MS = 1000


@dataclass
class SubClusters:
    """The running sub-clusters, by name (insertion order); `stop()` stops them all."""

    servers: dict[str, EmulatorServer] = field(default_factory=dict)

    def urls(self) -> dict[str, str]:
        return {name: s.url for name, s in self.servers.items()}

    def workload(self, name: str) -> Workload:
        return Workload(self.servers[name].emu)

    def stop(self) -> None:
        for s in self.servers.values():
            s.stop()

    def __enter__(self) -> SubClusters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_subclusters(clock: Clock, names: Sequence[str], *, size: int = 2, host: str = "127.0.0.1",
                      port: int = 0, node: Resources = Resources(8192, 8), physical_cores: float = 8.0,
                      seed: int = 0, prefix: str = "nm", idle_cores: float = 0.5) -> SubClusters:
    """One emulated RM per name, each with `size` NodeManagers `{prefix}-00000:45454`, ...
    whose hosts' own (primary) processes use `idle_cores` at rest (an idle host is never at 0:
    the NM reports 0 only before its first sample, which the guard treats as unknown);
    `port` 0 = free ports, else `port`, `port + 1`, ... in `names` order."""
    if len(set(names)) != len(names) or not names:
        raise ValueError(f"sub-cluster names must be given and unique, got {list(names)}")
    out = SubClusters()
    base_ts = int(clock.now() * 1000)
    try:
        for i, name in enumerate(names):
            emu = Emulator(clock, EmulatorConfig(seed=seed + i, cluster_ts_ms=base_ts - i * TS_STEP_MS))
            Workload(emu).add_cluster(size, node, physical_cores=physical_cores, prefix=prefix)
            with emu.lock:
                emu.model.set_primary_usage(idle_cores)
            out.servers[name] = EmulatorServer(emu, host, 0 if port == 0 else port + i).start()
    except BaseException:
        out.stop()
        raise
    return out
