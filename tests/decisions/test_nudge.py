"""The nudge's decision (decisions/nudge.py): which node, with which resource, or why not now."""

from __future__ import annotations

import pytest

from harvester.decisions.arbiter import PushRecord
from harvester.decisions.nudge import NudgeContext, decide_nudge
from harvester.domain import Resources

from harvesting_builders import NOW, sample, snapshot

A, B = "a:8041", "b:8041"
FULL = Resources(8192, 8)


def ctx(nodes, *, stale=False, pushed=None, sent=frozenset(), kills=frozenset()) -> NudgeContext:  # type: ignore[no-untyped-def]
    return NudgeContext(NOW, snapshot(nodes), stale, pushed or {}, frozenset(sent), frozenset(kills),
                        ("activation of r_1 at 100.0",), 30.0, "nudge-1")


def test_it_re_posts_the_first_settled_node_unchanged_with_minus_one() -> None:
    d = decide_nudge(ctx([sample(B, total=FULL), sample(A, total=Resources(4096, 4))]))
    a = d.action
    assert d.done and a is not None and a.node_id == A and a.resources == Resources(4096, 4)
    assert a.overcommit_timeout_ms == -1 and a.stimulus_id == "nudge-1"
    assert "re-post <4096 MB, 4 vc> unchanged (the RM's own value)" in a.reason and "activation of r_1" in a.reason


def test_the_value_is_the_guards_last_push_and_a_node_whose_push_is_in_flight_is_skipped() -> None:
    pushed = {A: PushRecord(Resources(4096, 4), NOW - 5), B: PushRecord(FULL, NOW - 50)}
    d = decide_nudge(ctx([sample(A, total=FULL), sample(B, total=FULL)], pushed=pushed))
    assert d.action is not None and d.action.node_id == B and "the guard's last push" in d.action.reason


@pytest.mark.parametrize(("kw", "nodes", "note"), [
    ({"stale": True}, None, "stale"),
    ({}, [], "no node"),
    ({}, [sample(A, total=FULL, state="UNHEALTHY")], "no node"),
    ({}, [sample(A, total=FULL, t=NOW - 60)], "no node"),                              # an old sample
    ({"kills": {A}}, None, "no node"),                                                 # a kill in flight: -1 would cancel it
    ({}, [sample(A, total=Resources(4096, 4), used=Resources(6144, 6))], "no node"),    # over-committed
])
def test_deferred(kw: dict, nodes, note: str) -> None:  # type: ignore[no-untyped-def]
    d = decide_nudge(ctx(nodes if nodes is not None else [sample(A, total=FULL)], **kw))
    assert d.action is None and not d.done and note in d.note


def test_the_guards_own_update_this_tick_is_the_nudge() -> None:
    d = decide_nudge(ctx([sample(A, total=FULL)], sent={B}, stale=True))
    assert d.action is None and d.done and "covered by the guard's own update of b:8041" in d.note
