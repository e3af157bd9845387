"""Kills in flight: state enum, valid transitions, history (DESIGN.md principle 6)."""

from __future__ import annotations

import pytest

from harvester.decisions.kills import (
    TRANSITIONS, InvalidTransition, KillPhase, reconcile, record_failures, record_sent, transition,
)
from harvester.domain import ActionError, KillContainer, Resources, SetNodeCapacity

from harvesting_builders import container, snapshot


def test_graceful_then_forceful_then_gone_keeps_its_history() -> None:
    r = transition(None, KillPhase.GRACEFUL, 10.0, "spike", container_id="c1", node_id="n1")
    r = transition(r, KillPhase.FORCEFUL, 21.0, "escalate")
    r = transition(r, KillPhase.GONE, 22.0, "gone")
    assert [h[0] for h in r.history] == [KillPhase.GRACEFUL, KillPhase.FORCEFUL, KillPhase.GONE]
    assert r.started_at == 10.0 and r.since == 22.0


@pytest.mark.parametrize(
    ("path", "bad"),
    [((), KillPhase.GONE), ((KillPhase.FORCEFUL,), KillPhase.GRACEFUL), ((KillPhase.GRACEFUL, KillPhase.GONE), KillPhase.FORCEFUL)],
)
def test_invalid_transitions_raise(path: tuple[KillPhase, ...], bad: KillPhase) -> None:
    r = None
    for p in path:
        r = transition(r, p, 1.0, "", container_id="c1")
    with pytest.raises(InvalidTransition, match="c1"):
        transition(r, bad, 2.0, "", container_id="c1")


def test_terminal_phases_have_no_way_out() -> None:
    assert TRANSITIONS[KillPhase.GONE] == TRANSITIONS[KillPhase.FAILED] == frozenset()


def test_record_sent_tracks_signals_and_ignores_capacity() -> None:
    sent = [KillContainer(container_id="c1", node_id="n1", reason="r"),
            SetNodeCapacity(node_id="n1", resources=Resources(1, 1), reason="r")]
    k = record_sent({}, sent, 5.0)
    assert k["c1"].phase is KillPhase.GRACEFUL and list(k) == ["c1"]
    again = record_sent(k, [KillContainer(container_id="c1", node_id="n1", reason="r")], 9.0)
    assert again["c1"].since == 5.0, "a resent graceful signal keeps its clock"
    forced = record_sent(k, [KillContainer(container_id="c1", node_id="n1", graceful=False, reason="esc")], 16.0)
    assert forced["c1"].phase is KillPhase.FORCEFUL and forced["c1"].since == 16.0


def test_failures_and_reconcile_end_records() -> None:
    k = record_sent({}, [KillContainer(container_id=c, node_id="n1", reason="r") for c in ("c1", "c2", "c3")], 1.0)
    k, failed = record_failures(k, [ActionError(KillContainer(container_id="c1", node_id="n1", reason="r"), 2.0, "HTTP 500")])
    assert [r.phase for r in failed] == [KillPhase.FAILED] and set(k) == {"c2", "c3"}
    partial = snapshot([], [container("c2")], complete=False)
    assert reconcile(k, partial) == (k, []), "a partial list proves nothing"
    k, gone = reconcile(k, snapshot([], [container("c2")]))
    assert set(k) == {"c2"} and [r.container_id for r in gone] == ["c3"] and gone[0].phase is KillPhase.GONE
