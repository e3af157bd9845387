"""The array decision (decisions/guard.py, issue 29) and the per-node rules agree on any cluster
(hypothesis): the same actions in the same order, the same view of every node (reason text
included: `harvester explain node` reads it), the same memos for the next decision, the same
coverage and last resorts. The per-node rules are the decision as it was before the arrays
(guard_reference.py); the random clusters are the invariant test's, over several ticks where
each decision's memos feed the next."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harvester.decisions.guard import evaluate
from harvester.decisions.guard_table import NodeViews

from guard_reference import evaluate_per_node
from test_guard_invariants import clusters


def _memos(memos) -> dict:  # NaN == NaN for the comparison
    return {k: (m.target, None if math.isnan(m.primary_cpu_cores) else m.primary_cpu_cores, m.allocated, m.seen_at)
            for k, m in memos.items()}


def _agree(ctx) -> None:
    got, want = evaluate(ctx), evaluate_per_node(ctx)
    assert got.actions == want.actions
    assert list(got.nodes) == list(want.nodes)
    assert [v.reason for v in got.nodes] == [v.reason for v in want.nodes]
    assert _memos(got.memos) == _memos(want.memos)
    assert dict(got.coverage) == dict(want.coverage) and list(got.coverage) == list(want.coverage)
    assert got.am_kills == want.am_kills
    assert got.outcomes() == want.outcomes()
    assert got.harvested_vcores_by_node() == want.harvested_vcores_by_node()
    assert got.harvested_vcores_by_class() == want.harvested_vcores_by_class()
    if isinstance(got.nodes, NodeViews):
        for v in want.nodes:
            assert got.nodes.get(v.node_id) == v


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.lists(st.floats(0, 20), min_size=1, max_size=3))
def test_array_decision_agrees_with_the_per_node_rules(ctx, later) -> None:
    _agree(ctx)
    memos = evaluate(ctx).memos
    for dt in later:  # the next decisions, on the previous one's (columnar) memos
        ctx = replace(ctx, now=ctx.now + dt, previous=memos)
        _agree(ctx)
        memos = evaluate(ctx).memos
