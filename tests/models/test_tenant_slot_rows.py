"""`series_from_rows` (the refit's streamed read, issue 29) equals the object path it replaced."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.history.sqlite import SqliteHistoryStore
from harvester.models.tenant_series import TenantSeries
from harvester.models.tenant_slots import TenantSlot, series_from_rows, series_from_slots

STEP = 120.0


def reference(slots: list[TenantSlot], *, start: float, end: float, step_s: float) -> tuple[TenantSeries, dict[str, int]]:
    """The object-per-slot build before issue 29, kept as the oracle."""
    width = int(math.ceil((end - start) / step_s - 1e-9))
    rows = [s for s in slots if start <= s.start < end and s.polls > 0]
    tenants = tuple(sorted({s.tenant for s in rows}))
    index = {t: i for i, t in enumerate(tenants)}
    matrix = np.full((len(tenants), width), np.nan)
    nodes: dict[str, int] = {}
    for s in rows:
        matrix[index[s.tenant], int(math.floor((s.start - start) / step_s + 1e-9))] = s.utilization
        nodes[s.tenant] = max(nodes.get(s.tenant, 0), s.nodes)
    return TenantSeries(tenants, matrix, step_s, start), nodes


slot_rows = st.lists(st.tuples(st.sampled_from(["web", "db", "etl", "search", "a" * 40]), st.integers(-3, 40),
                               st.floats(0, 50, allow_nan=False), st.integers(0, 5), st.integers(0, 9)),
                     max_size=120, unique_by=lambda r: (r[0], r[1]))


@settings(max_examples=300, deadline=None)
@given(slot_rows, st.integers(1, 7))
def test_the_streamed_build_equals_the_object_build(rows: list, chunk: int) -> None:
    slots = sorted((TenantSlot(t, k * STEP, u, p, n) for t, k, u, p, n in rows), key=lambda s: (s.start, s.tenant))
    want, want_nodes = reference(slots, start=0.0, end=30 * STEP, step_s=STEP)
    got, got_nodes, read = series_from_rows(((s.tenant, s.start, s.util_sum, s.polls, s.nodes) for s in slots),
                                            start=0.0, end=30 * STEP, step_s=STEP, chunk=chunk)
    assert got.tenants == want.tenants and got_nodes == want_nodes and read == len(slots)
    np.testing.assert_array_equal(got.matrix, want.matrix)  # NaN where NaN, the same bits elsewhere
    assert series_from_slots(slots, start=0.0, end=30 * STEP, step_s=STEP)[1] == want_nodes


def test_from_first_starts_at_a_younger_history_and_the_store_streams_in_order(tmp_path) -> None:
    store = SqliteHistoryStore(tmp_path / "h.db")
    store.add_tenant_slots([TenantSlot(t, k * STEP, 0.25 * (k % 4), 1, 3) for k in range(10, 20) for t in ("b", "a")])
    series, nodes, read = store.read_tenant_slots(
        lambda rows: series_from_rows(rows, start=0.0, end=30 * STEP, step_s=STEP, from_first=True), since=0.0, until=30 * STEP)
    assert read == 20 and series.start == 10 * STEP and series.matrix.shape == (2, 20) and nodes == {"a": 3, "b": 3}
    assert series.tenants == ("a", "b") and np.isnan(series.matrix[:, 10:]).all()
    order = store.read_tenant_slots(lambda rows: [(r[1], r[0]) for r in rows], since=12 * STEP, until=14 * STEP)
    assert order == [(12 * STEP, "a"), (12 * STEP, "b"), (13 * STEP, "a"), (13 * STEP, "b")]
    empty, _, none = store.read_tenant_slots(lambda rows: series_from_rows(rows, start=0.0, end=5 * STEP, step_s=STEP),
                                             since=0.0, until=5 * STEP)
    assert none == 0 and empty.tenants == () and empty.matrix.shape == (0, 5)
    store.close()
