"""Block availability under busy primary tenants (OSDI'16 §1, §4.2; issue item 4) — pure.

Rule: the primary tenant owns its server. When the primary's CPU utilization is above the
busy threshold, the server's DataNode refuses secondary (batch) accesses, so its replicas
cannot be read. A block is *unavailable* at an instant when it has at least one live replica
and ALL its live replicas are on busy servers (a block without live replicas is lost, which
the durability model counts separately).

Utilization is given per tenant (the tenant's "average server", §3.2) as an array
``util[tenant, step]`` sampled every ``step_s`` seconds; every server of a tenant is busy
when its tenant is. Missing samples (NaN) count as not busy: no evidence of a busy primary.

Over time, a block's history is cut into *segments* during which its set of live replicas
does not change; ``segment_busy_steps`` counts, for many segments at once, the steps whose
start lies in the segment and at which all of the segment's tenants are busy (a step is
counted whole or not at all, so each segment end is off by less than one step, either way).
Busy flags are bit-packed (64 steps per word): a month of 2-minute steps is 338 words per
tenant, and millions of segments take seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_CHUNK_WORDS = 1 << 20  # (segment, word) pairs expanded at a time: 8 MiB per uint64 temporary


def is_busy(cpu_utilization: float, threshold: float) -> bool:
    """A primary tenant is busy when its CPU utilization is strictly above the threshold."""
    return cpu_utilization > threshold


def block_available(live_replica_busy: Sequence[bool]) -> bool:
    """A block with live replicas is available unless every one of them is busy."""
    return any(not b for b in live_replica_busy)


def busy_matrix(tenant_util: np.ndarray, threshold: float) -> np.ndarray:
    """bool[tenant, step]: utilization strictly above ``threshold`` (NaN -> not busy)."""
    return np.asarray(tenant_util) > threshold  # NaN compares False: no copy of the series


def unavailable_now(replica_tenants: np.ndarray, tenant_busy: np.ndarray) -> np.ndarray:
    """bool[block] at one step; ``replica_tenants[block, slot]`` is a tenant or -1 (no live replica)."""
    replica_tenants = np.asarray(replica_tenants, dtype=np.int64)
    live = replica_tenants >= 0
    busy = np.where(live, tenant_busy[np.where(live, replica_tenants, 0)], True)
    return live.any(axis=1) & busy.all(axis=1)


@dataclass(frozen=True)
class PackedBusy:
    """Busy flags bit-packed per tenant: bit j of ``words[t, w]`` is step 64*w + j."""

    words: np.ndarray
    n_steps: int
    step_s: float

    @property
    def word_prefix(self) -> np.ndarray:
        """int64[tenant, n_words + 1]: busy steps in words [0, w) (cached)."""
        cached = self.__dict__.get("_prefix")
        if cached is None:
            counts = _popcount(self.words.ravel()).reshape(self.words.shape)
            cached = np.concatenate((np.zeros((len(counts), 1), np.int64), np.cumsum(counts, axis=1)), axis=1)
            object.__setattr__(self, "_prefix", cached)
        return cached

    @classmethod
    def pack(cls, busy: np.ndarray, step_s: float) -> PackedBusy:
        busy = np.asarray(busy, dtype=bool)
        n_tenants, n_steps = busy.shape
        n_words = max(1, -(-n_steps // 64))
        padded = np.zeros((n_tenants, n_words * 64), dtype=bool)
        padded[:, :n_steps] = busy
        packed = np.packbits(padded, axis=1, bitorder="little")
        return cls(np.ascontiguousarray(packed).view("<u8").astype(np.uint64), n_steps, float(step_s))

    def step_at(self, t_s: np.ndarray | float) -> np.ndarray:
        """Index of the first step starting at or after ``t_s``, clipped to [0, n_steps]."""
        steps = np.ceil(np.asarray(t_s, dtype=np.float64) / self.step_s)
        return np.clip(steps, 0, self.n_steps).astype(np.int64)


def _popcount(x: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).astype(np.int64)
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)  # numpy < 2.0
    return table[x.view(np.uint8).reshape(-1, 8)].sum(axis=1)


def segment_busy_steps(
    packed: PackedBusy, tenants: np.ndarray, start_step: np.ndarray, end_step: np.ndarray
) -> np.ndarray:
    """Steps in [start_step, end_step) at which every tenant of a segment is busy.

    ``tenants[segment, slot]`` holds the tenants of the live replicas, -1 for none; a
    segment without any tenant counts 0. Steps past the series are not counted.
    Returns int64[segment].
    """
    tenants = np.asarray(tenants, dtype=np.int64).reshape(len(start_step), -1)
    start = np.asarray(start_step, dtype=np.int64)
    end = np.minimum(np.asarray(end_step, dtype=np.int64), packed.n_steps)
    out = np.zeros(len(start), dtype=np.int64)
    idx = np.flatnonzero((end > start) & (tenants >= 0).any(axis=1))
    # Cheap filter: a segment one of whose tenants is never busy in its words counts 0.
    prefix = packed.word_prefix
    fw, lw = start[idx] // 64, (np.maximum(end[idx], 1) - 1) // 64
    keep = np.ones(idx.size, dtype=bool)
    for slot in range(tenants.shape[1]):
        t = tenants[idx, slot]
        live = t >= 0
        tt = np.where(live, t, 0)
        keep &= ~live | (prefix[tt, lw + 1] - prefix[tt, fw] > 0)
    idx = idx[keep]
    if idx.size == 0:
        return out
    first_w = start[idx] // 64
    last_w = (end[idx] - 1) // 64
    lengths = last_w - first_w + 1
    # Expand (segment, word) pairs in chunks of about _CHUNK_WORDS pairs to bound memory.
    cum = np.cumsum(lengths)
    cuts = np.searchsorted(cum, np.arange(1, int(cum[-1] // _CHUNK_WORDS) + 1) * _CHUNK_WORDS, side="right")
    edges = np.unique(np.concatenate(([0], cuts, [idx.size])))
    for lo, hi in zip(edges[:-1], edges[1:]):
        rows, n_w = idx[lo:hi], lengths[lo:hi]
        seg = np.repeat(np.arange(hi - lo), n_w)
        word = first_w[lo:hi][seg] + np.arange(seg.size) - np.repeat(np.cumsum(n_w) - n_w, n_w)
        acc = np.full(seg.size, _ALL, dtype=np.uint64)
        flat, n_words = packed.words.ravel(), packed.words.shape[1]
        for slot in range(tenants.shape[1]):
            t = tenants[rows, slot]
            if (t < 0).all():
                continue
            t = t[seg]
            live = t >= 0
            acc &= np.where(live, flat[np.where(live, t, 0) * n_words + word], _ALL)
        s_bit = (start[rows] % 64).astype(np.uint64)[seg]
        e_bit = ((end[rows] - 1) % 64 + 1).astype(np.uint64)[seg]
        acc &= np.where(word == first_w[lo:hi][seg], _ALL << s_bit, _ALL)
        acc &= np.where(word == last_w[lo:hi][seg], _ALL >> (np.uint64(64) - e_bit), _ALL)
        out[rows] = np.bincount(seg, weights=_popcount(acc), minlength=hi - lo).astype(np.int64)
    return out
