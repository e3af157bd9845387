"""The two built-in placement policies and the policy plumbing."""

from __future__ import annotations

import numpy as np
import pytest

from simrig import make_context  # type: ignore[import-not-found]
from harvester.sim.policies import (
    ClusterView,
    PlacementRequest,
    PrimaryAwarePolicy,
    StockYarnPolicy,
    build_policy,
    fill_in_order,
)


def view(free_v: list[int], *, primary: list[float] | None = None, cores: float = 4.0, seed: int = 0) -> ClusterView:
    n = len(free_v)
    z = np.zeros(n)
    return ClusterView(now=0.0, free_vcores=np.array(free_v), free_memory_mb=np.full(n, 10_000),
                       capacity_vcores=np.array(free_v), capacity_memory_mb=np.full(n, 10_000),
                       total_vcores=np.full(n, int(cores)), total_memory_mb=np.full(n, 8192),
                       physical_cores=np.full(n, cores), primary_cpu_cores=np.array(primary or z),
                       primary_memory_mb=np.full(n, 1024.0), batch_cpu_cores=z, running=np.ones(n, bool),
                       tenant_of=np.zeros(n, np.int32), tenant_history=np.zeros((1, 1), np.float32), step_s=120.0,
                       rng=np.random.default_rng(seed))


def request(count: int, vcores: int = 1, memory_mb: int = 100) -> PlacementRequest:
    return PlacementRequest("j", "j", "s", count, vcores, memory_mb, 0.0, False, None, count, count)


def test_fill_in_order_packs_nodes_in_order() -> None:
    order = np.array([3, 0, 2])
    slots = np.array([2, 0, 5])
    assert fill_in_order(order, slots, 4).tolist() == [3, 3, 2, 2]
    assert fill_in_order(order, slots, 100).tolist() == [3, 3, 2, 2, 2, 2, 2]
    assert fill_in_order(np.empty(0, np.int64), np.empty(0, np.int64), 3).size == 0


def test_heartbeat_order_fills_nodes_and_respects_free_capacity() -> None:
    pol = StockYarnPolicy(make_context(6, 4))
    v = view([4, 0, 2, 4, 1, 0])
    got = pol.place(request(8), v)
    counts = np.bincount(got, minlength=6)
    assert got.size == 8 and np.all(counts <= v.free_vcores)
    assert counts[1] == counts[5] == 0
    assert pol.place(request(3, vcores=3), view([4, 2, 2, 3, 1, 0])).tolist() in ([0, 3], [3, 0])


def test_heartbeat_order_is_seeded() -> None:
    a = StockYarnPolicy(make_context(50, 4)).place(request(5), view([1] * 50, seed=3))
    b = StockYarnPolicy(make_context(50, 4)).place(request(5), view([1] * 50, seed=3))
    c = StockYarnPolicy(make_context(50, 4)).place(request(5), view([1] * 50, seed=4))
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_stock_yarn_offers_a_static_capacity_once() -> None:
    pol = StockYarnPolicy(make_context(2, 16), static_fraction=0.75)
    caps = pol.capacity(view([0, 0], cores=16))
    assert caps is not None and caps.vcores.tolist() == [12, 12] and caps.memory_mb.tolist() == [6144, 6144]
    assert pol.capacity(view([0, 0], cores=16)) is None


def test_primary_aware_capacity_is_total_minus_primary_minus_reserve() -> None:
    pol = PrimaryAwarePolicy(make_context(3, 16), reserve_fraction=0.125)
    caps = pol.capacity(view([0, 0, 0], primary=[0.0, 5.2, 15.5], cores=16))
    assert caps.vcores.tolist() == [14, 8, 0]  # 16 - 2 - 0; floor(16 - 2 - 5.2); negative -> 0
    assert caps.memory_mb.tolist() == [6144, 6144, 6144]  # 8192 x 0.875 - 1024 primary
    assert caps.overcommit_timeout_ms == 0  # a cut below the allocation: the RM kills at once


def test_policy_specs_and_params_are_checked() -> None:
    ctx = make_context(2, 4)
    assert build_policy("primary-aware", {"reserve_fraction": 0.2}, ctx).name == "primary-aware"
    with pytest.raises(ValueError, match="bad params"):
        build_policy("stock-yarn", {"reserve_fraction": 0.2}, ctx)
    with pytest.raises(ValueError, match="unknown policy"):
        build_policy("best", {}, ctx)
    with pytest.raises(ValueError, match="cannot load policy"):
        build_policy("harvester.nothing:factory", {}, ctx)
    assert build_policy("simpolicy_factory:make", {}, ctx).name == "from-a-module"  # type: ignore[attr-defined]


def _reference_pass(order: np.ndarray, fv: np.ndarray, fm: np.ndarray, rng: np.random.Generator,
                    requests: list[PlacementRequest]) -> list[list[int]]:
    """The heartbeat placement as first written: the nodes with room at the pass start, in
    heartbeat order rotated to a random start, filled in order by each request in turn."""
    room = (fv > 0) & (fm > 0)
    ranked = order[room[order]]
    r = int(rng.integers(0, ranked.size)) if ranked.size else 0
    po = np.concatenate((ranked[r:], ranked[:r]))
    out = []
    for req in requests:
        got = fill_in_order(po, np.minimum(fv[po] // req.vcores, fm[po] // req.memory_mb), req.count)
        np.subtract.at(fv, got, req.vcores)
        np.subtract.at(fm, got, req.memory_mb)
        out.append(got.tolist())
    return out


@pytest.mark.parametrize("no_room", [0.0, 0.02, 0.1, 0.5, 0.95, 1.0])
def test_heartbeat_placements_match_the_reference_over_passes(no_room: float) -> None:
    """The fast paths (rotation view, node-by-node fill of small requests) place exactly as the
    reference, pass after pass, on clusters from idle to full."""
    gen = np.random.default_rng(int(no_room * 100))
    n = 300
    pol = StockYarnPolicy(make_context(n, 4))
    fv, fm = gen.integers(1, 9, n), gen.integers(1, 5, n) * 1024
    for _ in range(30):
        fv[gen.random(n) < no_room] = 0
        fm[gen.random(n) < no_room / 4] = 0
        reqs = [request(int(gen.choice([1, 2, 5, 8, 9, 40, 200])), int(gen.integers(1, 4)), int(gen.choice([512, 1024, 3000])))
                for _ in range(int(gen.integers(1, 12)))]
        want = _reference_pass(pol._order, fv.copy(), fm.copy(), np.random.default_rng(7), reqs)
        v = ClusterView(now=0.0, free_vcores=fv, free_memory_mb=fm, capacity_vcores=fv, capacity_memory_mb=fm,
                        total_vcores=np.full(n, 8), total_memory_mb=np.full(n, 8192), physical_cores=np.full(n, 4.0),
                        primary_cpu_cores=np.zeros(n), primary_memory_mb=np.zeros(n), batch_cpu_cores=np.zeros(n),
                        running=np.ones(n, bool), tenant_of=np.zeros(n, np.int32),
                        tenant_history=np.zeros((1, 1), np.float32), step_s=120.0, rng=np.random.default_rng(7))
        got = []
        for req in reqs:  # the substrate takes what each request got off the free arrays
            nodes = pol.place(req, v)
            np.subtract.at(fv, nodes, req.vcores)
            np.subtract.at(fm, nodes, req.memory_mb)
            got.append(nodes.tolist())
        assert got == want
        fv, fm = gen.integers(1, 9, n), gen.integers(1, 5, n) * 1024
