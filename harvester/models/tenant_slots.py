"""Per-tenant 2-minute slots, aggregated poll by poll (OSDI'16 §3.2) — pure.

§3.2: AutoPilot "records the CPU utilization every two minutes ... we compute the average of
their utilizations in each time slot, and use the utilization of this 'average' server for one
month to represent the primary tenant". Harvester polls the RM every ~10 s; re-reading 30 days
of raw 10-s node samples at every refit does not scale (thousands of nodes × 260 000 polls),
so every poll is folded at once into its tenant's slot and only the slots are kept for the
model window (≤ 30 days × 720 slots per tenant).

One poll contributes, per tenant, the utilization of its "average server" at that instant:

    u(node)   = min(1, primary cores / physical cores)        (primary_cpu_cores: unit-corrected)
    u(poll)   = mean of u(node) over the tenant's RUNNING nodes that reported utilization
    slot      = ⌊poll time / step_s⌋ · step_s                 (epoch-aligned, 2 minutes)
    stored    = (Σ u(poll), number of polls, most nodes seen in one poll) per (tenant, slot)
    u(slot)   = Σ u(poll) / polls

With every node in every poll this equals "average each node over the slot, then average the
nodes" (tenant_series.build_tenant_series); a node missing from one poll only drops out of that
poll's average. Sums and counts (not means) are stored so partial slots from several writers,
or from before and after a restart, add up exactly.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from harvester.domain import NodeSample
from harvester.models.tenant_series import TenantSeries, primary_cpu_cores


@dataclass(frozen=True, slots=True)
class TenantSlot:
    """Accumulated primary CPU utilization of one tenant in the slot starting at `start`."""

    tenant: str
    start: float
    util_sum: float
    polls: int
    nodes: int

    @property
    def utilization(self) -> float:
        return self.util_sum / self.polls if self.polls > 0 else math.nan


def slot_start(t: float, step_s: float) -> float:
    """The start of the epoch-aligned slot holding time `t`."""
    return math.floor(t / step_s) * step_s


def aggregate_poll(
    samples: Iterable[NodeSample],
    node_tenant: Mapping[str, str],
    physical_cores: Mapping[str, float],
    configured_vcores: Mapping[str, int],
    *,
    time: float,
    step_s: float = 120.0,
) -> list[TenantSlot]:
    """One poll's contribution per tenant (module docstring), sorted by tenant.

    Nodes without a tenant, a core count, utilization or in a state other than RUNNING do not
    count; a tenant none of whose nodes counts gets no row (a gap, not a zero).
    """
    tenants: list[str] = []
    util: list[float] = []
    for s in samples:
        tenant = node_tenant.get(s.node_id)
        if tenant is not None:
            tenants.append(tenant)
            util.append(node_utilization(s, physical_cores.get(s.node_id), configured_vcores.get(s.node_id)))
    return slots_from_utilization(tenants, np.asarray(util, dtype=np.float64), time=time, step_s=step_s)


def node_utilization(sample: NodeSample, cores: float | None, configured_vcores: int | None) -> float:
    """u(node) of the module docstring; NaN when it does not count (no cores, not RUNNING, unknown)."""
    if not cores or sample.state != "RUNNING":
        return math.nan
    primary = primary_cpu_cores(sample, cores, configured_vcores)
    return math.nan if primary is None else min(1.0, primary / cores)


def slots_from_utilization(tenants: Sequence[str], util: np.ndarray, *, time: float, step_s: float = 120.0
                           ) -> list[TenantSlot]:
    """One poll's contribution per tenant from each node's u(node) (NaN: does not count), sorted by tenant."""
    if step_s <= 0:
        raise ValueError(f"step_s must be positive, got {step_s}")
    names, index = np.unique(np.asarray(tenants, dtype=object), return_inverse=True) if len(tenants) else ((), None)
    if index is None:
        return []
    ok = ~np.isnan(util)
    sums = np.bincount(index[ok], weights=util[ok], minlength=len(names))
    counts = np.bincount(index[ok], minlength=len(names))
    start = slot_start(time, step_s)
    return [TenantSlot(str(t), start, float(u) / int(n), 1, int(n)) for t, u, n in zip(names, sums, counts) if n]


#: One stored slot as the store reads it: (tenant, start, util_sum, polls, nodes).
SlotRow = tuple[str, float, float, int, int]
#: Rows turned into arrays at a time (`series_from_rows`): bounded memory, numpy speed.
ROWS_PER_CHUNK = 65_536


def series_from_slots(
    slots: Iterable[TenantSlot], *, start: float, end: float, step_s: float = 120.0
) -> tuple[TenantSeries, dict[str, int]]:
    """(tenants × slots utilization matrix over [start, end), most nodes seen per tenant).

    `start` should be slot-aligned; a slot whose start falls outside the window is ignored.
    Tenants are sorted; a slot with no row is NaN (the pattern test treats it as missing).
    The node counts weight each tenant in its class's tags (utilization_classes.fit).
    """
    series, nodes, _ = series_from_rows(((x.tenant, x.start, x.util_sum, x.polls, x.nodes) for x in slots),
                                        start=start, end=end, step_s=step_s)
    return series, nodes


def series_from_rows(
    rows: Iterable[SlotRow], *, start: float, end: float, step_s: float = 120.0, from_first: bool = False,
    chunk: int = ROWS_PER_CHUNK,
) -> tuple[TenantSeries, dict[str, int], int]:
    """`series_from_slots` over the store's rows as they stream (HistoryStore.read_tenant_slots),
    `chunk` rows at a time, so a refit over thousands of tenants × 30 days never holds one object
    per slot (issue 29: 500 tenants took 2.5 GB that way); also the number of rows read.
    `from_first`: the window starts at the first row instead when that is later (rows sorted by
    start: a history younger than the window)."""
    if end <= start:
        raise ValueError(f"empty window [{start}, {end})")
    it = iter(rows)
    first = next(it, None)
    if first is not None and from_first:
        start = max(start, first[1])
    width = int(math.ceil((end - start) / step_s - 1e-9))
    codes: dict[str, int] = {}
    matrix = np.full((0, width), np.nan)
    most = np.zeros(0, np.int64)
    kept = np.zeros(0, bool)
    read = 0
    pending = [] if first is None else [first]
    while True:
        pending.extend(itertools.islice(it, chunk - len(pending)))
        if not pending:
            break
        read += len(pending)
        names, t, util_sum, polls, nodes = zip(*pending)
        pending = []
        code = np.fromiter((codes.setdefault(n, len(codes)) for n in names), np.int64, len(names))
        if len(codes) > matrix.shape[0]:  # new tenants: grow (doubling) the matrix and its columns
            grown = max(len(codes), 2 * matrix.shape[0])
            matrix = np.vstack([matrix, np.full((grown - matrix.shape[0], width), np.nan)])
            most, kept = np.pad(most, (0, grown - most.size)), np.pad(kept, (0, grown - kept.size))
        t_arr, count = np.array(t, np.float64), np.array(polls, np.int64)
        ok = (t_arr >= start) & (t_arr < end) & (count > 0)
        rows_ok = code[ok]
        cols = np.floor((t_arr[ok] - start) / step_s + 1e-9).astype(np.int64)
        matrix[rows_ok, cols] = np.array(util_sum, np.float64)[ok] / count[ok]
        np.maximum.at(most, rows_ok, np.array(nodes, np.int64)[ok])
        kept[rows_ok] = True
    names_by_code = sorted((n, c) for n, c in codes.items() if kept[c])
    order = np.array([c for _, c in names_by_code], np.int64)
    tenants = tuple(n for n, _ in names_by_code)
    return TenantSeries(tenants, matrix[order], step_s, start), {n: int(most[c]) for n, c in names_by_code}, read
