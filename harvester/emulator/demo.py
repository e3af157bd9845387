"""The embedded default cluster of `make run`: a small emulated YARN cluster that looks alive.

12 NodeManagers (16 vcores / 8 physical cores / 16 GB for YARN on 64 GB hosts) in four
primary tenants of three nodes each (hostnames `web-00.demo.harvester`, ...), whose CPU outside
YARN follows the three pattern kinds the harvesting paper classifies (../shared/papers 000
§3.2: periodic, constant, unpredictable), on a DAILY period so the FFT test of the class model
(models/patterns.py: daily harmonics over a 30-day window) sees them as a real cluster's:

- `web`     periodic: a daily sine (peak ~5.5 cores);
- `search`  periodic with a second harmonic and another phase;
- `db`      constant ~3 cores with small noise;
- `etl`     unpredictable: bursts of 2-7 cores at random times (~every 1.5 h), idle in between.

`DemoLoad` holds these functions of time. The emulator follows them live; `history_slots`
evaluates the SAME functions over the 30 days before the demo's start at 2-minute slots —
SYNTHESIZED DEMO HISTORY, written into the history store by the composition root only for the
embedded emulator (never for `cluster.source: rm`), so that the first refit right after
`make run` already classifies the tenants instead of waiting a month.

Batch work keeps arriving: two long apps at start, and every few minutes a new DS or
MapReduce-like app of random size and length. Everything is seeded, so a given seed and clock
give the same cluster.

    server = start_demo(speed=60.0)     # a ScaledClock: one real second = one emulated minute
    ... poll server.url + "/ws/v1/cluster/nodes" ...
    server.stop()
"""

from __future__ import annotations

import math

import numpy as np

from harvester.clock import Clock, RealClock, ScaledClock
from harvester.domain import Resources
from harvester.models.tenant_slots import TenantSlot, slot_start
from harvester.emulator.dynamics import Timing
from harvester.emulator.server import EmulatorServer
from harvester.emulator.state import Emulator, EmulatorConfig
from harvester.emulator.workloads import Workload

TENANTS = ("web", "search", "db", "etl")
NODE = Resources(16384, 16)
CORES = 8.0
PERIOD_S = 86400.0           # one day: the period the FFT pattern test looks for
HISTORY_DAYS = 30.0          # synthesized history before the start (and bursts after it)
NEW_APP_EVERY_S = 240.0
DB_NOISE_CORES = 0.15
IDLE_ETL_CORES = 0.3


def hostname_pattern(tenant: str) -> str:
    """The regex that maps the demo's hostnames to `tenant` (the embedded default's tenant rule)."""
    return f"^{tenant}-"


def _periodic(t: np.ndarray | float, phase: float, peak: float, harmonic: float = 0.0) -> np.ndarray | float:
    x = 2 * math.pi * (np.asarray(t) / PERIOD_S + phase)
    return np.maximum(0.2, peak * (0.55 + 0.45 * np.sin(x)) + harmonic * np.sin(2 * x))


class DemoLoad:
    """The demo tenants' primary CPU (physical cores per node) over time; seeded.

    Periodic tenants are exact functions of time; `db`'s noise and `etl`'s bursts come from
    generators seeded by `seed`. Bursts cover [start − 30 days, start + 30 days).
    """

    def __init__(self, *, seed: int = 0, start: float, nodes_per_tenant: int = 3) -> None:
        self.seed = seed
        self.start = start
        self.nodes_per_tenant = nodes_per_tenant
        span = HISTORY_DAYS * 86400.0
        self.bursts = _bursts(np.random.default_rng(seed), start=start - span, horizon_s=2 * span)
        self._live_noise = np.random.default_rng(seed + 1)

    def web(self, t: np.ndarray | float) -> np.ndarray | float:
        return _periodic(t, 0.0, 5.5)

    def search(self, t: np.ndarray | float) -> np.ndarray | float:
        return _periodic(t, 0.3, 4.0, harmonic=0.8)

    def etl(self, t: np.ndarray | float) -> np.ndarray | float:
        return _burst_level(self.bursts, t)

    def db_live(self, t: float) -> np.ndarray:
        """One value per db node (noise drawn live)."""
        return 3.0 + self._live_noise.normal(0.0, DB_NOISE_CORES, size=self.nodes_per_tenant)

    def history_slots(self, end: float, *, step_s: float = 120.0, days: float = HISTORY_DAYS,
                      sub_samples: int = 4) -> list[TenantSlot]:
        """SYNTHESIZED demo history: each tenant's average-server utilization per slot of the
        `days` before `end` (slot-aligned, end excluded), from the same functions as the live
        load, averaged over `sub_samples` instants per slot (and over the nodes for db's noise).
        One row per tenant and slot, counted as one poll of `nodes_per_tenant` nodes."""
        stop = slot_start(end, step_s)
        n = int(round(days * 86400.0 / step_s))
        starts = stop - step_s * np.arange(n, 0, -1)
        t = starts[:, None] + (np.arange(sub_samples) + 0.5) * step_s / sub_samples
        # db: the mean of sub_samples × nodes independent N(0, σ) draws is N(0, σ / √(their number))
        k = sub_samples * self.nodes_per_tenant
        db_noise = np.random.default_rng(self.seed + 7).normal(0.0, DB_NOISE_CORES / math.sqrt(k), size=n)
        cores = {
            "web": np.asarray(self.web(t)).mean(axis=1),
            "search": np.asarray(self.search(t)).mean(axis=1),
            "db": 3.0 + db_noise,
            "etl": np.asarray(self.etl(t)).mean(axis=1),
        }
        return [
            TenantSlot(tenant, float(s), float(min(1.0, c / CORES)), 1, self.nodes_per_tenant)
            for tenant in TENANTS
            for s, c in zip(starts, cores[tenant])
        ]


def build_demo(clock: Clock, *, seed: int = 0, nodes_per_tenant: int = 3, load: DemoLoad | None = None,
               timing: Timing | None = None) -> Emulator:
    """A seeded demo cluster on `clock` (see the module docstring); `load` defaults to one
    starting at the clock's now; `timing` the NM and RM intervals (default: Hadoop's)."""
    emu = Emulator(clock, EmulatorConfig(seed=seed, timing=timing or Timing()))
    w = Workload(emu)
    load = load or DemoLoad(seed=seed, start=clock.now(), nodes_per_tenant=nodes_per_tenant)
    ids: dict[str, list[str]] = {}
    for i, tenant in enumerate(TENANTS):
        ids[tenant] = [f"{tenant}-{j:02d}.demo.harvester:45454" for j in range(nodes_per_tenant)]
        w.add_nodes(ids[tenant], NODE, CORES, racks=[f"/rack-{i}"] * nodes_per_tenant, host_memory_mb=65536.0,
                    base_memory_mb=6000.0 + 4000.0 * i)
    w.primary_pattern(ids["web"], lambda t: float(load.web(t)))
    w.primary_pattern(ids["search"], lambda t: float(load.search(t)))
    w.primary_pattern(ids["db"], load.db_live)
    w.primary_pattern(ids["etl"], lambda t: float(load.etl(t)))
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


def _burst_level(bursts: np.ndarray, t: np.ndarray | float) -> np.ndarray | float:
    tt = np.asarray(t, dtype=np.float64)
    i = np.searchsorted(bursts[:, 0], tt, side="right") - 1
    inside = (i >= 0) & (tt < bursts[np.maximum(i, 0), 1])
    level = np.where(inside, bursts[np.maximum(i, 0), 2], IDLE_ETL_CORES)
    return float(level) if level.ndim == 0 else level


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
    from harvester.emulator.records import AmKind, AppSpec

    return AppSpec(name="demo-ds", kind=AmKind.DISTRIBUTED_SHELL, workers=workers, worker=size,
                   worker_duration_s=duration, worker_cpu_cores=cpu)


def _mr_spec(maps: int, size: Resources, duration: float):  # type: ignore[no-untyped-def]
    from harvester.emulator.records import AmKind, AppSpec

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
