"""What a placement policy must answer besides ``chooseTarget`` (HDFS ``BlockPlacementPolicy``).

Three questions the NameNode asks about an existing replica set, answered so that the grid
diversity of Algorithm 2 (OSDI'16 §4.2) survives deletions, checks and balancing:

- ``verify_placement`` (``verifyBlockPlacement``): is the set grid-diverse? A set of k
  replicas is diverse when no grid row and no grid column holds more than ceil(k/3) of them
  (Algorithm 2 gives every group of 3 distinct rows and columns; over an unordered set that is
  the checkable form), its environments are all distinct, and it spans >= min(2, k) racks
  (HDFS's own rule, ``BlockPlacementPolicyDefault``: ``minRacks = min(2, replication)``, so
  an under-replicated block on one rack is flagged as HDFS would).
  Each bound is lowered to what the table can offer (rows/columns that have nodes, number of
  environments and racks), so a small cluster is not flagged for what it cannot do.
  Replicas on nodes of unclassified tenants (row -1) count as a ``row``/``col`` violation,
  because Algorithm 2 uses them only when it must. Replicas on nodes missing from the table
  are listed in ``unknown`` and otherwise ignored: a stale table must not make the NameNode
  move healthy blocks.
- ``choose_replicas_to_delete`` (``chooseReplicasToDelete``): remove one replica at a time,
  the one whose removal loses least diversity, in the importance order of the relaxation
  (``types.RELAXATION_ORDER`` reversed): fewest rows+columns lost, then no environment lost,
  then no drop below two racks; among equals a busy node first (it cannot serve reads now),
  then the one with least free space (as HDFS does), then by id for determinism.
- ``is_movable`` (``isMovable``, asked by the Balancer and Mover): moving a replica from
  ``source`` to ``target`` is allowed only when none of the diversity measures (distinct
  rows, columns, environments, racks up to 2) decreases.

Caveat for the operator (documented for the plug-in): after a grid refit, blocks placed under
the previous grid may verify as not diverse; the NameNode then treats them as mis-replicated
and schedules moves. The plug-in should rate-limit or only verify against the grid version a
block was written with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from hdfs_placement.index import PlacementIndex
from hdfs_placement.types import GRID_COLS, GRID_ROWS, DeleteChoice, PlacementStatus


def _known(index: PlacementIndex, replicas: Sequence[str]) -> tuple[list[int], list[str]]:
    nodes, unknown = [], []
    for r in dict.fromkeys(replicas):  # a replica listed twice is one replica
        i = index.lookup.get(r, -1)
        if i >= 0 and index.ids[i] == r:
            nodes.append(i)
        else:
            unknown.append(r)
    return nodes, unknown


def _bands_in_use(index: PlacementIndex) -> tuple[int, int]:
    rows = {c // GRID_COLS for c in range(GRID_ROWS * GRID_COLS) if index.cell_nodes[c]}
    cols = {c % GRID_COLS for c in range(GRID_ROWS * GRID_COLS) if index.cell_nodes[c]}
    return max(len(rows), 1), max(len(cols), 1)


def verify_placement(index: PlacementIndex, replicas: Sequence[str], replication: int | None = None) -> PlacementStatus:
    """Grid/environment/rack diversity of a replica set (module docstring); never raises.

    ``replication`` (HDFS ``numOfReplicas``, default: the number of replicas) only sets the
    rack requirement, min(2, replication), as in ``BlockPlacementPolicyDefault``.
    """
    nodes, unknown = _known(index, replicas)
    k = len(nodes)
    violations: list[str] = []
    n_rows, n_cols = _bands_in_use(index)
    for name, attr, bands in (("row", index.row, n_rows), ("col", index.col, n_cols)):
        counts = Counter(attr[i] for i in nodes)
        cap = -(-k // min(3, bands)) if k else 0
        for band, c in sorted(counts.items()):
            if band < 0:
                violations.append(f"{name}: {c} replica(s) on tenants outside the grid")
            elif c > cap:
                violations.append(f"{name}: {c} replicas in {name} {band} (at most {cap} for {k})")
    envs = Counter(index.env[i] for i in nodes)
    if len(envs) < min(k, index.n_envs):
        dup = sorted(index.env_names[e] for e, c in envs.items() if c > 1)
        violations.append(f"environment: {k - len(envs)} replica(s) share environment(s) {', '.join(dup)}")
    racks = {index.rack[i] for i in nodes}
    need = min(2, k if replication is None else replication, index.n_racks)
    if len(racks) < need:
        violations.append(f"rack: {len(racks)} rack(s) < {need}")
    return PlacementStatus(not violations, tuple(violations), index.version, tuple(unknown))


def _diversity(index: PlacementIndex, nodes: Sequence[int]) -> tuple[int, int, int, int]:
    """(distinct rows, distinct columns, distinct environments, min(distinct racks, 2))."""
    return (
        len({index.row[i] for i in nodes if index.row[i] >= 0}),
        len({index.col[i] for i in nodes if index.col[i] >= 0}),
        len({index.env[i] for i in nodes}),
        min(len({index.rack[i] for i in nodes}), 2),
    )


def choose_replicas_to_delete(
    index: PlacementIndex,
    replicas: Sequence[str],
    replication: int,
    *,
    candidates: Collection[str] | None = None,
    hint: str | None = None,
) -> DeleteChoice:
    """Which replicas to remove so that ``replication`` remain (module docstring order).

    ``candidates`` (HDFS ``delCandidates``) limits what may be deleted; diversity is judged
    over all ``replicas``. ``hint`` (HDFS ``delNodeHint``) is taken when it loses no more
    diversity than the best choice. Replicas unknown to the table are never chosen.
    """
    nodes, unknown = _known(index, replicas)
    allowed = set(nodes if candidates is None else (index.lookup[c] for c in candidates if c in index.lookup))
    keep = list(nodes) + [-1] * len(unknown)  # unknown replicas still count towards the total
    hint_i = index.lookup.get(hint, -1) if hint else -1
    deleted: list[str] = []
    reasons: list[str] = []
    while len(keep) > replication:
        options = [i for i in keep if i >= 0 and i in allowed]
        if not options:
            reasons.append("no deletable replica left among the candidates")
            break
        before = _diversity(index, [i for i in keep if i >= 0])
        racks_before = before[3]

        def key(i: int) -> tuple:
            after = _diversity(index, [j for j in keep if j >= 0 and j != i])
            rowcol_lost = (before[0] - after[0]) + (before[1] - after[1])
            rack_drop = int(after[3] < min(2, racks_before))
            return (rowcol_lost, before[2] - after[2], rack_drop, not index.busy[i],
                    index.remaining[i], index.ids[i])

        ranked = sorted(options, key=key)
        pick = ranked[0]
        if hint_i in options and key(hint_i)[:3] == key(pick)[:3]:
            pick = hint_i
        k = key(pick)
        reasons.append(
            f"{index.ids[pick]}: loses {k[0]} row/col, {k[1]} environment, "
            f"{'a' if k[2] else 'no'} second rack; busy={index.busy[pick]}, free={index.remaining[pick]}"
        )
        keep.remove(pick)
        deleted.append(index.ids[pick])
    return DeleteChoice(tuple(deleted), "; ".join(reasons) or "nothing to delete", index.version)


def is_movable(index: PlacementIndex, replicas: Sequence[str], source: str, target: str) -> bool:
    """May the Balancer move the replica on ``source`` to ``target`` (diversity not reduced)?"""
    nodes, _ = _known(index, replicas)
    s, t = index.lookup.get(source, -1), index.lookup.get(target, -1)
    if s not in nodes or t < 0 or t in nodes:
        return False
    after = [t if i == s else i for i in nodes]
    return all(a >= b for a, b in zip(_diversity(index, after), _diversity(index, nodes)))
