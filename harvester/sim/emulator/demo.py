"""The embedded default cluster of `make run`: a small emulated YARN cluster that looks alive.

12 NodeManagers (16 vcores / 8 physical cores / 16 GB for YARN on 64 GB hosts) in four
primary tenants of three nodes each, whose CPU outside YARN follows the three pattern kinds
the harvesting paper classifies (../shared/papers 000 §3: periodic, constant, unpredictable):

- `web`     periodic: a daily-shaped sine compressed to a 1-hour period (peak ~5.5 cores);
- `search`  periodic with a second harmonic and another phase;
- `db`      constant ~3 cores with small noise;
- `etl`     unpredictable: bursts of 2-7 cores at random times, idle in between.

Batch work keeps arriving: two long distributed-shell apps at start, and every few minutes a
new DS or MapReduce-like app of random size and length. Everything is seeded, so a given
seed and clock give the same cluster.

    server = start_demo(speed=60.0)     # a ScaledClock: one real second = one emulated minute
    ... poll server.url + "/ws/v1/cluster/nodes" ...
    server.stop()
"""

from __future__ import annotations

import math

import numpy as np

from harvester.clock import Clock, RealClock, ScaledClock
from harvester.domain import Resources
from harvester.sim.emulator.server import EmulatorServer
from harvester.sim.emulator.state import Emulator, EmulatorConfig
from harvester.sim.emulator.workloads import Workload

TENANTS = ("web", "search", "db", "etl")
NODE = Resources(16384, 16)
CORES = 8.0
PERIOD_S = 3600.0
NEW_APP_EVERY_S = 240.0


def _periodic(phase: float, peak: float, harmonic: float = 0.0):  # type: ignore[no-untyped-def]
    def cores(t: float) -> float:
        x = 2 * math.pi * (t / PERIOD_S + phase)
        return max(0.2, peak * (0.55 + 0.45 * math.sin(x)) + harmonic * math.sin(2 * x))
    return cores


def build_demo(clock: Clock, *, seed: int = 0, nodes_per_tenant: int = 3) -> Emulator:
    """A seeded demo cluster on `clock` (see the module docstring)."""
    emu = Emulator(clock, EmulatorConfig(seed=seed))
    w = Workload(emu)
    rng = np.random.default_rng(seed)
    ids: dict[str, list[str]] = {}
    for i, tenant in enumerate(TENANTS):
        ids[tenant] = [f"{tenant}-{j:02d}.demo.harvester:45454" for j in range(nodes_per_tenant)]
        w.add_nodes(ids[tenant], NODE, CORES, racks=[f"/rack-{i}"] * nodes_per_tenant, host_memory_mb=65536.0,
                    base_memory_mb=6000.0 + 4000.0 * i)
    w.primary_pattern(ids["web"], _periodic(0.0, 5.5))
    w.primary_pattern(ids["search"], _periodic(0.3, 4.0, harmonic=0.8))
    noise = np.random.default_rng(seed + 1)
    w.primary_pattern(ids["db"], lambda t: 3.0 + noise.normal(0.0, 0.15, size=nodes_per_tenant))
    bursts = _bursts(rng, start=clock.now(), horizon_s=30 * 86400.0)
    w.primary_pattern(ids["etl"], lambda t: _burst_level(bursts, t))
    w.distributed_shell(6, Resources(2048, 2), duration_s=None, cpu_cores=0.6, name="demo-ds-service")
    w.mapreduce_sleep(12, Resources(1024, 1), map_duration_s=1800.0)
    _keep_submitting(w, np.random.default_rng(seed + 2), clock.now() + NEW_APP_EVERY_S)
    return emu


def _bursts(rng: np.random.Generator, start: float, horizon_s: float) -> np.ndarray:
    """(start, end, cores) rows: bursts of 5-40 min every ~1.5 h on average."""
    rows = []
    t = start
    while t < start + horizon_s:
        t += rng.exponential(5400.0)
        length = rng.uniform(300.0, 2400.0)
        rows.append((t, t + length, rng.uniform(2.0, 7.0)))
        t += length
    return np.array(rows)


def _burst_level(bursts: np.ndarray, t: float) -> float:
    i = int(np.searchsorted(bursts[:, 0], t, side="right")) - 1
    if i >= 0 and t < bursts[i, 1]:
        return float(bursts[i, 2])
    return 0.3


def _keep_submitting(w: Workload, rng: np.random.Generator, at: float) -> None:
    def submit(t: float) -> None:
        workers = int(rng.integers(2, 10))
        size = Resources(int(rng.choice([1024, 2048, 4096])), int(rng.integers(1, 3)))
        duration = float(rng.uniform(300.0, 2700.0))
        if rng.random() < 0.5:
            w.emu.apps_mgr.submit(_ds_spec(workers, size, duration, float(rng.uniform(0.1, 0.9))))
        else:
            w.emu.apps_mgr.submit(_mr_spec(workers, size, duration))
        w.emu.events.at(t + rng.exponential(NEW_APP_EVERY_S), submit)

    w.at(at, submit)


def _ds_spec(workers: int, size: Resources, duration: float, cpu: float):  # type: ignore[no-untyped-def]
    from harvester.sim.emulator.records import AmKind, AppSpec

    return AppSpec(name="demo-ds", kind=AmKind.DISTRIBUTED_SHELL, workers=workers, worker=size,
                   worker_duration_s=duration, worker_cpu_cores=cpu)


def _mr_spec(maps: int, size: Resources, duration: float):  # type: ignore[no-untyped-def]
    from harvester.sim.emulator.records import AmKind, AppSpec

    return AppSpec(name="demo-sleep-job", app_type="MAPREDUCE", kind=AmKind.MAPREDUCE, am=Resources(1536, 1),
                   workers=maps, worker=size, worker_duration_s=duration, worker_cpu_cores=0.3,
                   worker_mem_used_mb=400.0)


def start_demo(host: str = "127.0.0.1", port: int = 0, *, speed: float = 1.0, clock: Clock | None = None,
               seed: int = 0) -> EmulatorServer:
    """Build the demo cluster and serve it on loopback; `speed` > 1 runs time faster (ScaledClock).

    Returns the running server (`.url`, `.emu`); call `.stop()` to shut it down.
    """
    if clock is None:
        clock = RealClock() if speed == 1.0 else ScaledClock(speed)
    return EmulatorServer(build_demo(clock, seed=seed), host, port).start()
