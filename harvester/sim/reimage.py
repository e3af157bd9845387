"""Disk reimage events for a run: the plumbing to an OSDI'16-parameterized generator.

No public trace has per-server reimage logs (../shared/traces/README.md), so reimages come
from a generator parameterized by the OSDI'16 characterization (§3.3: >= 90 % of servers are
reimaged at most once a month, a ~10 % tail more often, reimages correlated within a
tenant). The generator lives in `hdfs_placement.reimage.generate_reimages` (shared with the
replica-placement work; its parameters are fitted to the paper's figures, not to a log);
`osdi16_reimages` adapts it, and is the default. The simulator calls any generator as

    generator(*, tenant_of: np.ndarray, horizon_s: float, rng: np.random.Generator, **params)
        -> ReimageSchedule | (times_s, servers)

A reimaged server is down for `downtime_s`: its containers are lost (their tasks re-run,
counted as `reimage` kills) and nothing is placed on it until it is back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from harvester.sim.plugins import load_callable


@dataclass(frozen=True, slots=True, eq=False)
class ReimageSchedule:
    """Reimage times (s from the run's start, ascending) and the server index of each."""

    times_s: np.ndarray
    servers: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        if self.times_s.shape != self.servers.shape:
            raise ValueError("one server per reimage time")


ReimageGenerator = Callable[..., Any]


def osdi16_reimages(*, tenant_of: np.ndarray, horizon_s: float, rng: np.random.Generator,
                    **params: Any) -> ReimageSchedule:
    """`hdfs_placement.reimage.generate_reimages` as a schedule: one entry per server wiped.

    `params` are `ReimageParams` fields (YAML lists become the tuples it expects). A group
    event (several servers of a tenant at one instant, §3.3) becomes one entry per server,
    all at the event's time.
    """
    from hdfs_placement.reimage import ReimageParams, generate_reimages

    def tup(v: Any) -> Any:
        return tuple(tup(x) for x in v) if isinstance(v, (list, tuple)) else v

    log = generate_reimages(np.asarray(tenant_of), horizon_s, rng, ReimageParams(**{k: tup(v) for k, v in params.items()}))
    times = np.repeat(np.asarray(log.times_s, dtype=np.float64), np.diff(log.offsets))
    return ReimageSchedule(times, np.asarray(log.servers, dtype=np.int64), "hdfs_placement.reimage.generate_reimages")


def resolve_generator(spec: str) -> ReimageGenerator:
    return load_callable(spec, "reimage generator")


def schedule_reimages(generator: ReimageGenerator, *, tenant_of: np.ndarray, horizon_s: float,
                      rng: np.random.Generator, params: Mapping[str, Any], source: str) -> ReimageSchedule:
    """Call the generator and normalize its answer (sorted, inside [0, horizon), valid servers)."""
    out = generator(tenant_of=tenant_of, horizon_s=horizon_s, rng=rng, **dict(params))
    if isinstance(out, ReimageSchedule):
        times, servers = out.times_s, out.servers
    else:
        times, servers = out
    times = np.asarray(times, dtype=np.float64)
    servers = np.asarray(servers, dtype=np.int64)
    keep = (times >= 0) & (times < horizon_s) & (servers >= 0) & (servers < tenant_of.shape[0])
    order = np.argsort(times[keep], kind="stable")
    return ReimageSchedule(times[keep][order], servers[keep][order], source)
