"""decisions/node_ordering.py: Algorithm 1's class ranking turned into a node order (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.decisions.class_selection import DEFAULT_WEIGHTS, ClassState
from harvester.decisions.guard import NodeView
from harvester.decisions.node_ordering import class_room_vcores, order_all, order_nodes
from harvester.domain import Resources
from harvester.models.job_history import JobType
from harvester.models.patterns import Pattern

P, C, U = Pattern.PERIODIC, Pattern.CONSTANT, Pattern.UNPREDICTABLE
CLASSES = (
    # class, pattern, average, peak, current, capacity: room differs by job type (§4.1 headroom)
    ClassState("periodic-0", P, 0.30, 0.70, 0.35, Resources(1 << 20, 100)),
    ClassState("constant-0", C, 0.20, 0.22, 0.20, Resources(1 << 20, 100)),
    ClassState("unpred-0", U, 0.10, 0.90, 0.10, Resources(1 << 20, 100)),
)


def node(node_id: str, class_id: str, vcores: int | None, *, stale: bool = False) -> NodeView:
    cap = None if vcores is None else Resources(vcores * 1024, vcores)
    return NodeView(node_id, "t", class_id, Resources(16384, 16), cap, 1.0, 0.5, stale, "formula", "sent:increase", cap)


NODES = (
    node("p1:1", "periodic-0", 4), node("p2:1", "periodic-0", 8),
    node("c1:1", "constant-0", 6), node("u1:1", "unpred-0", 5), node("u2:1", "unpred-0", 9),
    node("x1:1", "", 7), node("s1:1", "constant-0", 8, stale=True), node("z1:1", "unpred-0", 0),
)


@pytest.mark.parametrize(("job_type", "room"), [
    # short: 1 - current; medium: 1 - max(avg, cur); long: 1 - max(peak, cur); × 100 vcores
    (JobType.SHORT, {"periodic-0": 65, "constant-0": 80, "unpred-0": 90}),
    (JobType.MEDIUM, {"periodic-0": 65, "constant-0": 80, "unpred-0": 90}),
    (JobType.LONG, {"periodic-0": 30, "constant-0": 78, "unpred-0": 10}),
])
def test_room_is_algorithm_1_headroom_in_vcores(job_type: JobType, room: dict[str, float]) -> None:
    for c in CLASSES:
        assert class_room_vcores(job_type, c) == pytest.approx(room[c.class_id])


@pytest.mark.parametrize(("job_type", "expected"), [
    # weighted room: short U 90×3=270 > C 80×1 ... P 65×2=130 > C 80; medium P 65×3=195 > C 160 > U 90
    (JobType.SHORT, ["u2:1", "u1:1", "p2:1", "p1:1", "c1:1", "x1:1"]),
    (JobType.MEDIUM, ["p2:1", "p1:1", "c1:1", "u2:1", "u1:1", "x1:1"]),
    # long: C 78×3=234 > P 30×2=60 > U 10×1=10
    (JobType.LONG, ["c1:1", "p2:1", "p1:1", "u2:1", "u1:1", "x1:1"]),
])
def test_order_follows_the_weighted_class_ranking_then_capacity(job_type: JobType, expected: list[str]) -> None:
    order = order_nodes(job_type, CLASSES, NODES, DEFAULT_WEIGHTS)
    assert list(order.node_ids) == expected
    assert "left out: 1 without a fresh guard view, 1 without harvestable vcores" in order.reason


def test_reserve_and_allocation_reduce_the_room() -> None:
    c = ClassState("c", C, 0.2, 0.2, 0.2, Resources(1 << 20, 100), allocated=Resources(0, 30), reserve_fraction=0.1)
    assert class_room_vcores(JobType.SHORT, c) == pytest.approx((0.8 - 0.1) * 100 - 30)
    full = ClassState("f", C, 0.2, 0.2, 0.95, Resources(1 << 20, 100), reserve_fraction=0.1)
    assert class_room_vcores(JobType.SHORT, full) == 0.0


def test_no_model_orders_by_capacity() -> None:
    order = order_nodes(JobType.SHORT, (), NODES, DEFAULT_WEIGHTS)
    assert list(order.node_ids) == ["u2:1", "p2:1", "x1:1", "c1:1", "u1:1", "p1:1"]
    assert "no class model yet" in order.reason


def test_missing_or_old_guard_decision_gives_no_advice() -> None:
    none = order_all(CLASSES, None, DEFAULT_WEIGHTS, decision_age_s=None, stale_after_s=60)
    assert all(o.node_ids == () and "not decided" in o.reason for o in none.values())
    old = order_all(CLASSES, NODES, DEFAULT_WEIGHTS, decision_age_s=61, stale_after_s=60)
    assert set(old) == set(JobType) and all(o.node_ids == () and "61 s old" in o.reason for o in old.values())
    fresh = order_all(CLASSES, NODES, DEFAULT_WEIGHTS, decision_age_s=5, stale_after_s=60)
    assert all(len(o.node_ids) == 6 for o in fresh.values())


views = st.builds(
    node, st.from_regex(r"n[0-9]{1,3}:1", fullmatch=True), st.sampled_from(["periodic-0", "constant-0", "unpred-0", "x"]),
    st.one_of(st.none(), st.integers(0, 64)), stale=st.booleans(),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(views, max_size=40, unique_by=lambda v: v.node_id), st.sampled_from(list(JobType)))
def test_every_usable_node_once_and_never_a_stale_or_empty_one(nodes: list[NodeView], job_type: JobType) -> None:
    order = order_nodes(job_type, CLASSES, nodes, DEFAULT_WEIGHTS)
    usable = {v.node_id for v in nodes if not v.stale and v.capacity_after is not None and v.capacity_after.vcores > 0}
    assert sorted(order.node_ids) == sorted(usable)
