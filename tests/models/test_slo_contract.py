"""SLO sign-off (Morpheus §3; models/slo_contract.py): its lifecycle and the terms in force."""

from __future__ import annotations

import itertools

import pytest

from harvester.lifecycle import InvalidTransition, check_table
from harvester.models.slo_contract import (
    CONTRACT_TRANSITIONS, ContractState, Override, Proposal, SignOffError, Terms, accept, effective_terms, fit_note, fit_warning,
    from_doc, new_contract, override, reject, reset, to_doc,
)

S = ContractState
P = Proposal("etl", 600.0, 30.0, 480.0, 0.0, False, "d = p50 ...", 60.0, (2048, 4096), (2, 4), "§5 LP over 8 runs")
TERMS = Terms(600.0, 30.0, 480.0, 0.0, 60.0, (2048, 4096), (2, 4), False)
NONE = Proposal("adhoc", None, None, None, 0.0, False, "output read time too variable: CV(T_outRead) 0.400 > 0.1",
                60.0, (1024,), (1,), "§5 LP over 3 runs")


def test_the_table() -> None:
    check_table(CONTRACT_TRANSITIONS)
    for src, dst in itertools.product(S, S):
        assert (dst in CONTRACT_TRANSITIONS[src]) == (not (src is dst and src in (S.PROPOSED, S.REJECTED)))
    with pytest.raises(InvalidTransition, match="PROPOSED -> PROPOSED"):
        reset(new_contract("etl", 0.0), 1.0, "ana")


@pytest.mark.parametrize(("require", "expected"), [(False, TERMS), (True, None)])
def test_a_proposal_is_planned_without_sign_off_unless_required(require: bool, expected: Terms | None) -> None:
    terms, why = effective_terms(P, None, require)
    assert terms == expected and ("waiting for" in why) == require


def test_accept_pins_the_terms_until_decided_again() -> None:
    c = accept(new_contract("etl", 0.0), P, 5.0, "ana", "looks right")
    later = Proposal("etl", 600.0, 40.0, 500.0, 0.0, False, "refit", 60.0, (4096, 4096), (4, 4), "refit")
    assert effective_terms(later, c, True) == (TERMS, "the terms its owner accepted")
    assert c.lifecycle.history[-1].reason == "accepted by ana: looks right" and c.by == "ana"
    back = reset(c, 9.0, "ana")
    assert back.state is S.PROPOSED and effective_terms(later, back, False)[0].deadline_s == 500.0


def test_nothing_to_accept_without_an_actionable_slo_but_an_override_can_give_it() -> None:
    with pytest.raises(SignOffError, match="nothing to accept .* CV"):
        accept(new_contract("adhoc", 0.0), NONE, 1.0, "ana")
    partial = override(new_contract("adhoc", 0.0), Override(deadline_s=900.0), 1.0, "ana")
    assert effective_terms(NONE, partial, True)[0] is None and "has no period" in effective_terms(NONE, partial, True)[1]
    full = override(new_contract("adhoc", 0.0), Override(period_s=3600.0, earliest_s=0.0, deadline_s=900.0), 1.0, "ana")
    terms, why = effective_terms(NONE, full, True)
    assert terms == Terms(3600.0, 0.0, 900.0, 0.0, 60.0, (1024,), (1,), False) and why.startswith("the owner's override")


def test_an_override_keeps_following_the_inference_where_it_gives_nothing_and_scales_the_skyline() -> None:
    c = override(new_contract("etl", 0.0), Override(deadline_s=420.0, skyline_scale=1.5), 1.0, "ana", "more data")
    terms, _ = effective_terms(P, c, False)
    assert (terms.period_s, terms.earliest_s, terms.deadline_s) == (600.0, 30.0, 420.0)
    assert terms.memory_mb == (3072, 6144) and terms.vcores == (3, 6)
    assert "deadline_s=420, skyline_scale=1.5" in c.lifecycle.history[-1].reason
    empty = override(c, Override(earliest_s=500.0), 2.0, "ana")
    assert effective_terms(P, empty, False) == (None, "overridden window is empty: deadline 480s <= earliest 500s")


@pytest.mark.parametrize("bad", [dict(period_s=0.0), dict(deadline_s=-1.0), dict(skyline_scale=0.0),
                                 dict(earliest_s=float("nan"))])
def test_bad_override_values(bad: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(SignOffError):
        Override(**bad)


def test_reject_wins_over_everything_and_round_trips() -> None:
    c = reject(accept(new_contract("etl", 0.0), P, 1.0, "ana"), 2.0, "bob", "runs ad hoc now")
    assert effective_terms(P, c, False) == (None, "rejected by its owner")
    assert from_doc("etl", to_doc(c)) == c


@pytest.mark.parametrize(("earliest", "deadline", "memory", "warned", "noted"), [
    (0.0, 600.0, (1024,) * 10, "", ""),                    # 10 whole steps [0, 600): exactly fits
    (0.0, 600.0, (1024,) * 11, "needs 11 steps of 60s (660s) but the window [0.0s, 600.0s] holds 10", ""),
    (0.0, 600.0, (1024,) * 10 + (0, 0), "", ""),           # steps needing nothing are not reserved
    (30.0, 600.0, (1024,) * 10, "holds 9", ""),            # the window starts at the next whole step (60 s)
    # no whole step inside [30, 90]: before, it held 0 and nothing could be reserved; now the steps covering it
    (30.0, 90.0, (1024,), "", "holds no whole step of 60s: the reservation covers it, [0s, 120s)"),
    (30.0, 50.0, (1024, 1024), "holds 1", "covers it, [0s, 60s)"),
])
def test_a_skyline_longer_than_its_window_is_flagged_and_a_window_without_a_whole_step_is_rounded_out(
        earliest: float, deadline: float, memory: tuple[int, ...], warned: str, noted: str) -> None:
    terms = Terms(86_400.0, earliest, deadline, 0.0, 60.0, memory, tuple(1 if m else 0 for m in memory))
    got = fit_warning(terms)
    assert (warned in got and "LowCost will reject it" in got and "static provisioning" in got) if warned else got == ""
    assert noted in fit_note(terms) if noted else fit_note(terms) == ""


def test_accepting_a_skyline_longer_than_its_window_says_so() -> None:
    long = Proposal("etl", 600.0, 30.0, 150.0, 0.0, False, "d = ...", 60.0, (2048,) * 3, (2,) * 3, "§5 LP")
    assert "holds 1" in long.warning and P.warning == "" and NONE.warning == ""
    c = accept(new_contract("etl", 0.0), long, 5.0, "ana")
    assert c.state is S.ACCEPTED and "(warning: the skyline needs 3 steps" in c.lifecycle.history[-1].reason
    cut = Proposal("etl", 600.0, 30.0, 150.0, 0.0, False, "d = ...", 60.0, (2048,), (2,), "§5 LP over 4 of 6", 2)
    c = accept(new_contract("etl", 0.0), cut, 5.0, "ana")
    assert cut.warning == "" and cut.terms() is not None and cut.terms().longer_runs == 2  # type: ignore[union-attr]
    assert "(reserved as: the skyline leaves out 2 training run(s) longer than the window" in c.lifecycle.history[-1].reason
