"""Algorithm 2 of OSDI'16 §4.2: choose the DataNodes of one block's replicas — pure.

Paper, Algorithm 2 (lines 6-18): the first replica goes to the server creating the block
(and its class); each further replica goes to a class picked at random among those whose row
AND column have not been picked yet, to a random primary tenant of that class whose
environment holds no replica yet, and to a server of that tenant; after every third replica
the used rows and columns are forgotten.

Choices the paper leaves open (the transcription stops mid-§4.2), in the spirit of HDFS's
``BlockPlacementPolicyDefault``:

- First replica: the writer's DataNode when the writer is a DataNode in the table that is not
  excluded, has ``block_size`` free bytes and is not busy (HDFS likewise skips an overloaded
  local node). Otherwise "the default rule" is the general step below with nothing used yet,
  i.e. a random cell, then a node in it.
- Favoured nodes (HDFS ``favoredNodes``) are tried first for every replica, in the given
  order, and taken when they satisfy all constraints of that replica; otherwise ignored.
- "A random primary tenant of this class, then a server of it": one draw of a server with
  probability proportional to its free bytes within the cell. That is the same as drawing the
  tenant in proportion to its free storage and then its server in proportion to free bytes;
  proportional (not uniform) draws keep the fill even, as the equal-storage cells intend.
- Existing replicas (re-replication, pipeline recovery) count first, in the order given:
  they use up rows, columns, environments and racks like chosen ones.
- Environments are never forgotten (a block rarely has more replicas than environments).
- Racks are a tie-breaker only: among nodes meeting every constraint, one on a rack the
  block does not use yet is preferred (HDFS's intent: survive a rack loss).
- Busy nodes (primary tenant above the CPU threshold) are avoided when possible.

Constraints: hard — never relaxed — are: not excluded, not already holding the block, free
bytes >= block size. Soft ones are relaxed, only when no node satisfies them, in this order:
``environment``, then ``row_col``, then ``busy`` (``types.RELAXATION_ORDER``). The fallback
scores every hard-eligible node lexicographically (not busy > new row and new column, one
point each > new environment > new rack) and draws among the best in proportion to free
bytes, so a relaxed replica still keeps as much diversity as the cluster allows. Each target
reports what it relaxed. If no hard-eligible node is left the answer has fewer targets, never
a bad one.

Randomness comes only from the caller: a ``numpy.random.Generator``, an int seed per call, or
any callable returning uniform [0, 1) draws (``splitmix.SplitMix64``: the stream the Java
plug-in replays for the cross-language test vectors).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Sequence

import numpy as np

from hdfs_placement.index import LiveState, PlacementIndex
from hdfs_placement.types import (
    GRID_COLS,
    GRID_ROWS,
    RELAX_BUSY,
    RELAX_ENVIRONMENT,
    RELAX_ROW_COL,
    ChooseTargetsResult,
)

Rng = np.random.Generator | int | Callable[[], float]

_FAST_ATTEMPTS = 8  # random picks at full constraints before the exhaustive fallback scan


class _Uniforms:
    """Uniform [0, 1) draws from the caller's Generator, fetched in small batches (speed), or
    one at a time, in order, from a callable stream (a replayable one such as SplitMix64)."""

    __slots__ = ("_gen", "_buf", "_draw")

    def __init__(self, rng: Rng) -> None:
        self._draw = rng if callable(rng) else None
        self._gen = None if callable(rng) else rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self._buf: list[float] = []

    def __call__(self) -> float:
        if self._draw is not None:
            return self._draw()
        if not self._buf:
            self._buf = self._gen.random(16).tolist()
        return self._buf.pop()


class _Block:
    """Per-call state: what the block's replicas use so far (Algorithm 2's bookkeeping)."""

    __slots__ = ("taken", "rows", "cols", "envs", "racks", "count")

    def __init__(self) -> None:
        self.taken: set[int] = set()
        self.rows = 0  # bit masks of used rows / columns since the last "forget"
        self.cols = 0
        self.envs: set[int] = set()
        self.racks: set[int] = set()
        self.count = 0

    def add(self, index: PlacementIndex, node: int) -> None:
        self.count += 1
        if node >= 0:
            self.taken.add(node)
            self.envs.add(index.env[node])
            self.racks.add(index.rack[node])
            if index.row[node] >= 0:
                self.rows |= 1 << index.row[node]
                self.cols |= 1 << index.col[node]
        if self.count % 3 == 0:  # Algorithm 2 lines 15-16: forget rows and columns
            self.rows = self.cols = 0


def choose_target_indices(
    index: PlacementIndex,
    n_new: int,
    *,
    block_size: int,
    rng: Rng,
    writer: int = -1,
    existing: Sequence[int] = (),
    excluded: Collection[int] = (),
    favored: Sequence[int] = (),
    state: LiveState | None = None,
) -> tuple[list[tuple[int, tuple[str, ...]]], str]:
    """Algorithm 2 on node indices: ``n_new`` more replicas -> [(node, relaxed)], reason.

    ``existing`` may contain -1 for replicas on nodes the table does not know (they count in
    the 3-replica groups but constrain nothing). ``state`` overrides the table's free bytes
    and busy flags (simulation); without it the table's snapshot is used.
    """
    remaining = state.remaining if state is not None else index.remaining
    busy = state.busy if state is not None else index.busy
    u = _Uniforms(rng)
    blk = _Block()
    for node in existing:
        blk.add(index, node)
    blocked = excluded if isinstance(excluded, (set, frozenset)) else set(excluded)
    out: list[tuple[int, tuple[str, ...]]] = []
    notes: list[str] = []

    def usable(i: int) -> bool:  # hard constraints + not busy
        return i not in blocked and i not in blk.taken and remaining[i] >= block_size and not busy[i]

    def ideal(i: int) -> bool:  # every constraint of the current replica
        if not usable(i) or index.env[i] in blk.envs:
            return False
        r = index.row[i]
        return r >= 0 and not (blk.rows >> r) & 1 and not (blk.cols >> index.col[i]) & 1

    for _ in range(n_new):
        node = next((f for f in favored if 0 <= f and ideal(f)), -1)
        relaxed: tuple[str, ...] = ()
        if node < 0 and blk.count == 0 and writer >= 0:
            if usable(writer):
                node = writer
            else:
                notes.append("writer not usable (excluded, full or busy): first replica random")
        if node < 0:
            node = _sample(index, blk, blocked, remaining, busy, block_size, u)
        if node < 0:
            node, relaxed = _scan(index, blk, blocked, remaining, busy, block_size, u)
        if node < 0:
            notes.append(f"no datanode left with {block_size} free bytes outside excluded/chosen")
            break
        out.append((node, relaxed))
        blk.add(index, node)
    reason = f"{len(out)} of {n_new} targets"
    if notes:
        reason += "; " + "; ".join(notes)
    if any(r for _, r in out):
        reason += "; relaxed: " + ", ".join(sorted({c for _, r in out for c in r}))
    return out, reason


def _sample(index, blk, blocked, remaining, busy, block_size, u) -> int:
    """Algorithm 2 lines 9-14 by rejection sampling; -1 when the attempts find nothing."""
    cells = index.allowed_cells[(blk.rows << GRID_COLS) | blk.cols]
    if not cells:
        return -1
    want_new_rack = len(blk.racks) < index.n_racks
    backup = -1
    for _ in range(_FAST_ATTEMPTS):
        c = cells[int(u() * len(cells))]
        cum = index.cell_cum[c]
        k = bisect_right(cum, u() * cum[-1])
        nodes = index.cell_nodes[c]
        i = nodes[k if k < len(nodes) else -1]
        if i in blocked or i in blk.taken or remaining[i] < block_size or busy[i]:
            continue
        if index.env[i] in blk.envs:
            continue
        if not want_new_rack or index.rack[i] not in blk.racks:
            return i
        if backup < 0:
            backup = i
    return backup


def _scan(index, blk, blocked, remaining, busy, block_size, u) -> tuple[int, tuple[str, ...]]:
    """Exhaustive fallback: best hard-eligible node by the relaxation order (module docstring)."""
    rem = index.remaining_np if remaining is index.remaining else remaining
    bz = index.busy_np if busy is index.busy else busy
    ok = rem >= block_size
    drop = [i for i in (*blocked, *blk.taken) if 0 <= i < index.n]
    ok[drop] = False
    cand = np.flatnonzero(ok)
    if cand.size == 0:
        return -1, ()
    row_new = np.array([not (blk.rows >> r) & 1 for r in range(GRID_ROWS)] + [False])
    col_new = np.array([not (blk.cols >> c) & 1 for c in range(GRID_COLS)] + [False])
    env_used = np.zeros(index.n_envs, dtype=bool)
    env_used[list(blk.envs)] = True
    rack_used = np.zeros(index.n_racks, dtype=bool)
    rack_used[list(blk.racks)] = True
    rn = row_new[index.row_np[cand]]
    cn = col_new[index.col_np[cand]]
    en = ~env_used[index.env_np[cand]]
    nb = ~bz[cand]
    score = nb * 64 + (rn.astype(np.int64) + cn) * 16 + en * 4 + ~rack_used[index.rack_np[cand]]
    best = cand[score == score.max()]
    weights = rem[best].astype(np.float64)
    cum = np.cumsum(weights)
    k = int(np.searchsorted(cum, u() * cum[-1], side="right")) if cum[-1] > 0 else int(u() * best.size)
    i = int(best[min(k, best.size - 1)])
    relaxed = []
    if index.env[i] in blk.envs:
        relaxed.append(RELAX_ENVIRONMENT)
    r = index.row[i]
    if r < 0 or (blk.rows >> r) & 1 or (blk.cols >> index.col[i]) & 1:
        relaxed.append(RELAX_ROW_COL)
    if bz[i]:
        relaxed.append(RELAX_BUSY)
    return i, tuple(relaxed)


def choose_targets(
    index: PlacementIndex,
    *,
    replication: int,
    block_size: int,
    rng: Rng,
    writer: str | None = None,
    existing: Iterable[str] = (),
    excluded: Iterable[str] = (),
    favored: Iterable[str] = (),
) -> ChooseTargetsResult:
    """Algorithm 2 for one block, by DataNode ids (proto ``ChooseTargets``).

    ``replication`` is the total wanted including ``existing``; only new targets are
    returned. ``writer`` may be a DataNode id, hostname or IP (unknown -> no local replica).
    Ids unknown to the table are ignored in ``excluded``/``favored``.
    """
    if block_size < 0:
        raise ValueError("block_size must be >= 0")
    existing_idx = [index.resolve(e) for e in existing]
    n_new = replication - len(existing_idx)
    if n_new <= 0:
        return ChooseTargetsResult(index.version, (), "replication already met by existing replicas")
    lookup = index.lookup
    excluded_idx = {lookup[x] for x in excluded if x in lookup}
    favored_idx = [lookup[f] for f in favored if f in lookup]
    chosen, reason = choose_target_indices(
        index, n_new, block_size=block_size, rng=rng, writer=index.resolve(writer),
        existing=existing_idx, excluded=excluded_idx, favored=favored_idx,
    )
    return ChooseTargetsResult(index.version, tuple(index.target(i, r) for i, r in chosen), reason)
