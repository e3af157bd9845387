"""Constraint-aware batch placement (paper 003): CRV arithmetic, ordering, admission control, placement."""

from __future__ import annotations

import math

import pytest

from harvester.decisions.constrained_placement import (
    PlacementStrategy, RecentClass, constraint_resource_vector, contention_key, decide,
)
from harvester.models.constraints import PlacementConstraint, PlacementKind, Strength, parse_constraint
from harvester.models.queueing import ClassLoad, ServiceMoments

from placement_nodes import Ctx, Node, task, view

X86 = {"isa": "x86_64", "cores": "16"}
ARM = {"isa": "aarch64", "cores": "32"}


def _by_id(plan):
    return {p.task_id: p for p in plan.placements}


def test_crv_is_demand_over_supply_per_dimension() -> None:
    # 3 x86 nodes, 1 arm node; 2 arm tasks asked recently, this batch asks 2 arm + 1 any.
    recent = [RecentClass((parse_constraint("isa=aarch64"),), ClassLoad(2 / 300, ServiceMoments.deterministic(10)), 2)]
    plan = decide(Ctx([Node(X86), Node(X86), Node(X86), Node(ARM)],
                      [task("a1", "isa=aarch64"), task("a2", "isa=aarch64"), task("u")], recent=recent).build())
    dims = {d.key: (d.demand, d.supply, d.ratio) for d in plan.crv}
    assert dims["*"] == (5.0, 4.0, 1.25)            # every task asks for "any node"
    assert dims["isa=aarch64"] == (4.0, 1.0, 4.0)   # (2 recent + 2 now) / 1 node
    assert _by_id(plan)["a1"].crv_ratio == 4.0 and _by_id(plan)["u"].crv_ratio == 1.25


def test_crv_counts_only_running_nodes_as_supply() -> None:
    plan = decide(Ctx([Node(ARM), Node(ARM, running=False)], [task("a", "isa=aarch64")]).build())
    assert {d.key: d.supply for d in plan.crv}["isa=aarch64"] == 1.0


def test_the_scarce_task_goes_first_and_keeps_its_node() -> None:
    # The arm node has the most free space, so a naive "most free first" placement of the
    # unconstrained tasks (listed first) would fill it; one arm task then could not start.
    nodes = [Node(ARM, total=(4096, 4)), Node(X86, total=(2048, 2)), Node(X86, total=(2048, 2))]
    tasks = [task("u1", mb=2048, vc=2), task("u2", mb=2048, vc=2), task("arm", "isa=aarch64", mb=4096, vc=4)]
    plan = decide(Ctx(nodes, tasks).build())
    assert [p.task_id for p in plan.placements][0] == "arm"
    placed = _by_id(plan)
    assert placed["arm"].node_ids[0] == "n0" and placed["arm"].fits_now
    assert {placed["u1"].node_ids[0], placed["u2"].node_ids[0]} == {"n1", "n2"}
    assert "CRV ratio 1 (tightest of isa=aarch64)" in placed["arm"].reason


def test_contention_key_orders_by_wait_then_ratio_then_work() -> None:
    keys = {"long wait": contention_key(100.0, 10.0, 0.1, 50.0), "saturated": contention_key(math.inf, 10.0, 0.1, 50.0),
            "scarce": contention_key(0.0, 10.0, 8.0, 50.0), "short": contention_key(0.0, 10.0, 0.1, 1.0),
            "plain": contention_key(5.0, 10.0, 0.1, 50.0)}
    assert sorted(keys, key=keys.get) == ["saturated", "long wait", "scarce", "short", "plain"]
    assert contention_key(50.0, 10.0, 1.0, 1.0)[:2] == contention_key(60.0, 10.0, 1.1, 1.0)[:2], "factor ~2: one bucket"
    assert contention_key(9.0, 10.0, 0.9, 1.0)[:2] == (0, 0), "waits under one service time, demand under supply: SRPT"


def _soft_case(max_wait_s: float, factor: float):
    # One fast node (clock 3.0, 1 slot), loaded by a recent soft class at λ = 0.5/s, S = 1 s;
    # three idle slow nodes. The batch adds one task of the same class: λ = 0.5 + 1/300.
    # ρ = 0.50333, W = λ·E[S²] / (2(1−ρ)) = 0.50333 / 0.99333 = 0.5067 s.
    fast = parse_constraint("clock_ghz>2.5", Strength.SOFT)
    recent = [RecentClass((fast,), ClassLoad(0.5, ServiceMoments.deterministic(1.0)), 150)]
    nodes = [Node({"clock_ghz": "3.0"}, total=(1024, 1)), *[Node({"clock_ghz": "2.0"}, total=(1024, 1))] * 3]
    strategy = PlacementStrategy(max_wait_s=max_wait_s, max_wait_factor=factor)
    return decide(Ctx(nodes, [task("t", soft=["clock_ghz>2.5"], duration=1.0)], strategy, recent).build())


def test_relaxation_rule_relaxes_when_the_wait_exceeds_both_bounds() -> None:
    p = _soft_case(max_wait_s=0.1, factor=0.1).placements[0]  # bound = max(0.1, 0.1×1 s) = 0.1 s < 0.5067 s
    assert p.relaxed == ("clock_ghz>2.5",)
    assert "M/G/1 wait 0.507 s > bound max(0.1, 0.1×1) = 0.1 s" in p.reason
    # relaxed means "may run elsewhere": the fast node is idle right now, so it still ranks first
    assert p.node_ids[0] == "n0" and p.unsatisfied_soft == ()


@pytest.mark.parametrize(("max_wait_s", "factor"), [(1.0, 0.1), (0.1, 2.0)])
def test_relaxation_rule_keeps_soft_constraints_within_either_bound(max_wait_s: float, factor: float) -> None:
    p = _soft_case(max_wait_s, factor).placements[0]
    assert p.relaxed == () and p.node_ids[0] == "n0" and p.unsatisfied_soft == ()


def test_a_saturated_soft_class_is_relaxed_but_a_hard_one_is_queued() -> None:
    busy = Node({"clock_ghz": "3.0", "cores": "64"}, free=(0, 0))
    nodes = [busy, Node({"clock_ghz": "2.0", "cores": "8"}), Node({"clock_ghz": "2.0", "cores": "8"})]
    plan = decide(Ctx(nodes, [task("soft", soft=["clock_ghz>2.5"]), task("hard", "cores>=64")]).build())
    placed = _by_id(plan)
    assert placed["soft"].relaxed == ("clock_ghz>2.5",) and placed["soft"].fits_now
    assert "M/G/1 wait inf s" in placed["soft"].reason
    hard = placed["hard"]
    assert not hard.fits_now and hard.node_ids == ("n0",) and hard.relaxed == ()
    assert hard.expected_wait_s == math.inf and hard.reason.endswith("M/G/1 wait of cores>=64 = inf s")


def test_unplaceable_when_no_running_node_satisfies_or_is_large_enough() -> None:
    nodes = [Node(X86), Node(ARM, running=False)]
    plan = decide(Ctx(nodes, [task("arm", "isa=aarch64"), task("huge", mb=65536), task("ok")]).build())
    why = {u.task_id: u.reason for u in plan.unplaceable}
    assert set(why) == {"arm", "huge"} and [p.task_id for p in plan.placements] == ["ok"]
    assert why["arm"] == "no RUNNING node satisfies isa=aarch64 with at least 1024 MB / 1 vcores in total"
    assert "any RUNNING node with at least 65536 MB" in why["huge"]


def test_a_node_is_never_promised_more_than_it_has_free() -> None:
    nodes = [Node(X86, total=(8192, 8), free=(3072, 8))]
    plan = decide(Ctx(nodes, [task(f"t{i}") for i in range(5)]).build())
    fits = [p for p in plan.placements if p.fits_now]
    assert len(fits) == 3 and all(not p.fits_now and p.node_ids == ("n0",) for p in plan.placements[3:])


def test_candidates_are_distinct_fit_now_and_start_with_the_placement() -> None:
    nodes = [Node(X86) for _ in range(6)]
    plan = decide(Ctx(nodes, [task("a"), task("b")], PlacementStrategy(candidates=4)).build())
    for p in plan.placements:
        assert len(p.node_ids) == 4 and len(set(p.node_ids)) == 4
    # first fit in rank order: the best node is filled before the next one is used
    assert plan.placements[0].node_ids[0] == plan.placements[1].node_ids[0] == "n0"


def _racks(n_racks: int, per_rack: int) -> list[Node]:
    return [Node({"rack": f"/r{r}"}) for r in range(n_racks) for _ in range(per_rack)]


def test_hard_anti_affinity_spreads_over_racks_and_refuses_beyond() -> None:
    spread = PlacementConstraint(PlacementKind.ANTI_AFFINITY)
    plan = decide(Ctx(_racks(3, 2), [task(f"t{i}", placement=[spread]) for i in range(4)]).build())
    racks = [p.node_ids[0] for p in plan.placements]
    assert len(plan.placements) == 3 and len({int(n[1:]) // 2 for n in racks}) == 3
    assert [u.task_id for u in plan.unplaceable] == ["t3"]
    assert "placement constraints exclude every node" in plan.unplaceable[0].reason


def test_soft_anti_affinity_prefers_new_racks_then_shares() -> None:
    spread = PlacementConstraint(PlacementKind.ANTI_AFFINITY, strength=Strength.SOFT)
    plan = decide(Ctx(_racks(2, 2), [task(f"t{i}", placement=[spread]) for i in range(3)]).build())
    racks = [int(p.node_ids[0][1:]) // 2 for p in plan.placements]
    assert len(plan.placements) == 3 and set(racks[:2]) == {0, 1}


def test_affinity_keeps_a_group_on_one_rack_and_groups_are_independent() -> None:
    together = PlacementConstraint(PlacementKind.AFFINITY, group="g")
    other = PlacementConstraint(PlacementKind.AFFINITY, group="h")
    tasks = [task(f"g{i}", placement=[together]) for i in range(3)] + [task("h0", placement=[other])]
    plan = decide(Ctx(_racks(3, 3), tasks).build())
    racks = {p.task_id: int(p.node_ids[0][1:]) // 3 for p in plan.placements}
    assert racks["g0"] == racks["g1"] == racks["g2"]


def test_crv_vector_with_waits_per_dimension() -> None:
    nodes = [Node(X86), Node(ARM)]
    recent = [RecentClass((parse_constraint("isa=aarch64"),), ClassLoad(0.5 / 300, ServiceMoments.deterministic(10)), 2)]
    dims = {e.dimension.key: e for e in constraint_resource_vector(view(nodes), recent)}
    assert set(dims) == {"*", "isa=aarch64"}
    assert dims["isa=aarch64"].dimension.ratio == 2.0 and dims["*"].dimension.ratio == 1.0
    assert 0 < dims["*"].wait_s < dims["isa=aarch64"].wait_s, "the arm node carries the arm class's load"
    assert constraint_resource_vector(view(nodes), [])[0].dimension.demand == 0.0
