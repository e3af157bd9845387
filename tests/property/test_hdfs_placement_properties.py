"""Invariants of HDFS-H placement over random clusters (hypothesis)."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hdfs_placement import (
    DataNode,
    PlacementIndex,
    PlacementTable,
    TenantStats,
    build_placement_table,
    choose_targets,
    fit_grid,
    tenant_available_bytes,
)

BLOCK = 100


@st.composite
def clusters(draw):
    """A random table: tenants (some without stats), environments, racks, space, busy flags."""
    n_tenants = draw(st.integers(1, 12))
    n_envs = draw(st.integers(1, 6))
    nodes = []
    for t in range(n_tenants):
        env = f"e{draw(st.integers(0, n_envs - 1))}"
        for k in range(draw(st.integers(1, 4))):
            nodes.append(DataNode(
                f"10.{t}.0.{k}:9866", f"h{t}-{k}", f"/r{draw(st.integers(0, 3))}", f"t{t}", env, 1000,
                draw(st.sampled_from([0, BLOCK - 1, BLOCK, 500, 1000])), draw(st.booleans()),
            ))
    known = draw(st.sets(st.integers(0, n_tenants - 1), min_size=0, max_size=n_tenants))
    space = tenant_available_bytes(nodes)
    stats = [
        TenantStats(f"t{t}", next(n.environment for n in nodes if n.tenant == f"t{t}"),
                    draw(st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0])), draw(st.sampled_from([0.1, 0.5, 0.9])),
                    space.get(f"t{t}", 0))
        for t in sorted(known)
    ]
    table = build_placement_table(nodes, fit_grid(stats), version=1, generated_at_ms=0, busy_cpu_threshold=0.9)
    return PlacementIndex(table)


@st.composite
def requests(draw, index: PlacementIndex):
    ids = index.ids
    subset = st.lists(st.sampled_from(ids), unique=True, max_size=len(ids))
    existing = draw(st.lists(st.sampled_from(ids), unique=True, max_size=3))
    return dict(
        replication=len(existing) + draw(st.integers(1, 7)),
        writer=draw(st.one_of(st.none(), st.sampled_from(ids))),
        existing=existing,
        excluded=draw(subset),
        favored=draw(subset),
        rng=draw(st.integers(0, 2**32 - 1)),
    )


def _check(index: PlacementIndex, req: dict) -> None:
    res = choose_targets(index, block_size=BLOCK, **req)
    chosen = [index.lookup[i] for i in res.datanode_ids]
    excluded = {index.lookup[x] for x in req["excluded"]}
    existing = [index.lookup[x] for x in req["existing"]]
    hard = {i for i in range(index.n) if i not in excluded and i not in existing and index.remaining[i] >= BLOCK}
    # Hard constraints: never excluded, never existing, never over free space, never twice.
    assert len(set(chosen)) == len(chosen) and set(chosen) <= hard
    # Always answers when it can: as many targets as asked or as there are eligible nodes.
    assert len(chosen) == min(req["replication"] - len(existing), len(hard))
    # Replay Algorithm 2's bookkeeping and check every target against what was possible.
    rows: set[int] = set()
    cols: set[int] = set()
    envs: set[int] = set()
    taken = set(existing)
    count = 0

    def add(i: int) -> None:
        nonlocal count, rows, cols
        count += 1
        taken.add(i)
        envs.add(index.env[i])
        if index.row[i] >= 0:
            rows.add(index.row[i])
            cols.add(index.col[i])
        if count % 3 == 0:
            rows, cols = set(), set()

    for i in existing:
        add(i)
    for pos, (i, target) in enumerate(zip(chosen, res.targets)):
        free = [j for j in hard if j not in taken]
        grid_ok = lambda j: index.row[j] >= 0 and index.row[j] not in rows and index.col[j] not in cols  # noqa: E731
        ideal = [j for j in free if grid_ok(j) and index.env[j] not in envs and not index.busy[j]]
        writer_first = pos == 0 and not existing and req["writer"] and i == index.resolve(req["writer"])
        if target.relaxed == ():  # the writer's own node needs only to be usable and idle
            assert i in ideal or (writer_first and not index.busy[i])
        else:
            assert not ideal  # relaxed only when no node met every constraint
            assert ("busy" in target.relaxed) == bool(index.busy[i])
            assert ("environment" in target.relaxed) == (index.env[i] in envs)
            assert ("row_col" in target.relaxed) == (not grid_ok(i))
            if index.busy[i]:
                assert all(index.busy[j] for j in free)
            elif not grid_ok(i):
                assert not any(grid_ok(j) and not index.busy[j] for j in free)
        add(i)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_choose_targets_invariants(data) -> None:
    index = data.draw(clusters())
    req = data.draw(requests(index))
    _check(index, req)
    assert choose_targets(index, block_size=BLOCK, **req) == choose_targets(index, block_size=BLOCK, **req)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 1), st.integers(0, 10**6)), min_size=0, max_size=60))
def test_grid_fit_invariants(rows) -> None:
    stats = [TenantStats(f"t{k}", "e", r, p, w) for k, (r, p, w) in enumerate(rows)]
    grid = fit_grid(stats)
    assert set(grid.tenant_cells) == {s.tenant for s in stats}
    weights = [s.available_bytes for s in stats] if sum(s.available_bytes for s in stats) else [1] * len(stats)
    per_cell = np.zeros(9)
    for s, w in zip(stats, weights):
        per_cell[grid.cell_of(s.tenant).index] += w
    assert np.allclose(per_cell, grid.cell_bytes)
    if stats:
        ideal = sum(weights) / 9
        assert grid.imbalance == np.abs(per_cell - ideal).max() / ideal
        for s in stats:  # the bounds reproduce the rows, up to ties sitting exactly on a bound
            v, row = s.reimages_per_server_month, grid.cell_of(s.tenant).row
            on_bound = sum(b == v for b in grid.row_bounds)
            assert row - on_bound <= grid.classify(v, s.peak_cpu).row <= row


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=8), st.text(max_size=8), st.booleans(),
                          st.integers(0, 2**62)), min_size=1, max_size=8, unique_by=lambda t: t[0]))
def test_table_json_round_trip(entries) -> None:
    nodes = [DataNode(i, h, "/r", "t", "e", cap, cap // 2, busy) for i, h, busy, cap in entries]
    grid = fit_grid([TenantStats("t", "e", 0.1, 0.2, 1)])
    table = build_placement_table(nodes, grid, version=5, generated_at_ms=123, busy_cpu_threshold=0.75)
    text = table.dumps()
    assert text.isascii()
    assert PlacementTable.from_json(json.loads(text)) == table
