"""Invariants of constraint-aware placement (hypothesis): whatever the cluster and the batch,
a hard constraint is never violated, a node is never promised more than it has free, hard
placement constraints hold, and every task is answered exactly once."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.decisions.constrained_placement import PlacementStrategy, decide
from harvester.models.constraints import PlacementConstraint, PlacementKind, Strength, parse_constraint

from placement_nodes import Ctx, Node, task

CONSTRAINTS = ["isa=x86_64", "isa=aarch64", "cores>=16", "cores<32", "kernel>5.4", "nic_gbps in 10,25", "gpu!=1"]

nodes_st = st.lists(st.builds(
    lambda isa, cores, kernel, nic, gpu, rack, total, used, running: Node(
        {"isa": isa, "cores": cores, "kernel": kernel, "nic_gbps": nic, "rack": f"/r{rack}",
         **({"gpu": gpu} if gpu else {})},
        total=total, free=(max(0, total[0] - used[0]), max(0, total[1] - used[1])), running=running),
    st.sampled_from(["x86_64", "aarch64"]), st.sampled_from(["8", "16", "32", "64"]),
    st.sampled_from(["4.19", "5.4", "5.10"]), st.sampled_from(["1", "10", "25"]), st.sampled_from(["", "1"]),
    st.integers(0, 3), st.sampled_from([(4096, 4), (8192, 8), (16384, 16)]),
    st.tuples(st.integers(0, 16384), st.integers(0, 16)), st.booleans(),
), min_size=1, max_size=20)

tasks_st = st.lists(st.tuples(
    st.lists(st.sampled_from(CONSTRAINTS), max_size=2, unique=True),
    st.lists(st.sampled_from(CONSTRAINTS), max_size=2, unique=True),
    st.sampled_from([(512, 1), (1024, 1), (2048, 2), (4096, 4), (8192, 8)]),
    st.sampled_from([None, "spread", "spread-soft", "together"]),
    st.floats(0.0, 100.0),
), min_size=1, max_size=25)

PLACEMENT = {"spread": PlacementConstraint(PlacementKind.ANTI_AFFINITY),
             "spread-soft": PlacementConstraint(PlacementKind.ANTI_AFFINITY, strength=Strength.SOFT),
             "together": PlacementConstraint(PlacementKind.AFFINITY)}


@settings(max_examples=150, deadline=None)
@given(nodes_st, tasks_st, st.integers(1, 4), st.floats(0.01, 100.0))
def test_placement_invariants(nodes, specs, candidates, max_wait_s) -> None:
    tasks = [task(f"t{i}", *hard, soft=soft, mb=r[0], vc=r[1], duration=d,
                  placement=[PLACEMENT[p]] if p else [])
             for i, (hard, soft, r, p, d) in enumerate(specs)]
    ctx = Ctx(nodes, tasks, PlacementStrategy(candidates=candidates, max_wait_s=max_wait_s)).build()
    plan = decide(ctx)
    index = {nid: i for i, nid in enumerate(ctx.view.table.node_ids)}
    by_id = {t.task_id: t for t in tasks}

    answered = [p.task_id for p in plan.placements] + [u.task_id for u in plan.unplaceable]
    assert sorted(answered) == sorted(by_id), "every task answered exactly once"

    taken = defaultdict(lambda: [0, 0])
    racks = defaultdict(list)
    for p in plan.placements:
        t = by_id[p.task_id]
        assert 1 <= len(p.node_ids) <= candidates and len(set(p.node_ids)) == len(p.node_ids)
        for nid in p.node_ids:
            n = nodes[index[nid]]
            assert n.running, "only RUNNING nodes"
            for c in t.hard:
                assert c.matches(n.attrs), f"hard {c.key} violated on {nid}"
            if not p.relaxed:
                for c in t.soft:
                    assert c.matches(n.attrs), f"soft {c.key} violated without relaxation"
        assert set(p.relaxed) <= {c.key for c in t.soft}
        first = nodes[index[p.node_ids[0]]]
        if p.fits_now:
            taken[p.node_ids[0]][0] += t.resources.memory_mb
            taken[p.node_ids[0]][1] += t.resources.vcores
            if t.placement:
                racks[t.placement[0]].append(first.attrs["rack"])
        else:
            assert p.expected_wait_s >= 0
    for nid, (mb, vc) in taken.items():
        free = nodes[index[nid]].free
        assert mb <= free[0] and vc <= free[1], f"{nid} over its free resources"
    spread = racks.get(PLACEMENT["spread"], [])
    assert len(spread) == len(set(spread)), "hard anti-affinity: one task of the group per rack"
    together = racks.get(PLACEMENT["together"], [])
    assert len(set(together)) <= 1, "hard affinity: the group on one rack"
    for u in plan.unplaceable:
        t = by_id[u.task_id]
        fits_somewhere = any(
            n.running and all(c.matches(n.attrs) for c in t.hard)
            and n.total[0] >= t.resources.memory_mb and n.total[1] >= t.resources.vcores for n in nodes)
        assert not fits_somewhere or t.placement, f"{u.task_id} refused though a node could take it: {u.reason}"


def test_parse_of_the_strategy_constraints() -> None:
    assert all(parse_constraint(c) for c in CONSTRAINTS)
