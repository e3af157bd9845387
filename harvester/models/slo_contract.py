"""SLO sign-off (Morpheus §3): a job owner signs off, overrides or rejects the inferred SLO and
skyline — pure values with an explicit lifecycle (DESIGN.md principle 6).

§3: "the job owners are given three options: 1) sign-off on the proposed SLO and job resource
model as-is, 2) override any of the parameters based on further knowledge (e.g., the job will
run on 10× more data starting tomorrow), or simply 3) reject the use of SLOs, in which case the
job runs with standard fair-queueing semantics."

    PROPOSED ──accept──▶ ACCEPTED ──override──▶ OVERRIDDEN
       │  ▲                 │ ▲                    │
       │  └────reset────────┴─┼────────────────────┤
       └──reject──▶ REJECTED ◀┴────────────────────┘   (any state can be accepted, overridden,
                                                        rejected or reset again)

- PROPOSED (no decision yet, or reset): the inference's current proposal is used when
  `slo.require_sign_off` is false, none when it is true;
- ACCEPTED pins the terms signed off (period, window, skyline) until the owner decides again;
  later refits are shown beside them, not applied;
- OVERRIDDEN: the given values replace the inferred ones (None keeps the inferred value, which
  keeps following refits); `skyline_scale` multiplies the skyline ("10× more data");
- REJECTED: no reservation.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from enum import Enum
from typing import Any, Mapping

from harvester.lifecycle import Change, Lifecycle
from harvester.models.skyline_window import needed_steps


class ContractState(str, Enum):
    PROPOSED = "PROPOSED"
    ACCEPTED = "ACCEPTED"
    OVERRIDDEN = "OVERRIDDEN"
    REJECTED = "REJECTED"


_ALL = frozenset(ContractState)
#: Every decision can be taken again from any state; only "reset" of a PROPOSED one is no move.
CONTRACT_TRANSITIONS: Mapping[ContractState, frozenset[ContractState]] = {
    ContractState.PROPOSED: _ALL - {ContractState.PROPOSED},
    ContractState.ACCEPTED: _ALL,
    ContractState.OVERRIDDEN: _ALL,
    ContractState.REJECTED: _ALL - {ContractState.REJECTED},
}
HISTORY_KEPT = 50


class SignOffError(ValueError):
    """A sign-off that cannot be applied (nothing to accept, a bad override value)."""


def window_steps(earliest_s: float, deadline_s: float, step_s: float) -> tuple[int, int]:
    """(first, last) plan steps of the window [earliest, deadline]: the whole steps inside it; when
    it holds none (a window shorter than a step, or one straddling a step boundary), the steps
    that cover it, so a job with any window always gets at least one step (`window_rounded`)."""
    first, last = _inside(earliest_s, deadline_s, step_s)
    if last >= first or deadline_s <= earliest_s:
        return first, last
    return int(math.floor(earliest_s / step_s + 1e-9)), int(math.ceil(deadline_s / step_s - 1e-9)) - 1


def _inside(earliest_s: float, deadline_s: float, step_s: float) -> tuple[int, int]:
    return int(math.ceil(earliest_s / step_s - 1e-9)), int(math.floor(deadline_s / step_s + 1e-9)) - 1


def window_rounded(earliest_s: float, deadline_s: float, step_s: float) -> str:
    """Why the reserved steps reach outside [earliest, deadline] ("" when they lie inside it)."""
    first, last = _inside(earliest_s, deadline_s, step_s)
    if last >= first or deadline_s <= earliest_s:
        return ""
    a, b = window_steps(earliest_s, deadline_s, step_s)
    return (f"the window [{earliest_s:.1f}s, {deadline_s:.1f}s] holds no whole step of {step_s:g}s: the "
            f"reservation covers it, [{a * step_s:g}s, {(b + 1) * step_s:g}s)")


def window_room(terms: Terms) -> int:
    """Whole plan steps the reservation of `terms` may use (window_steps)."""
    first, last = window_steps(terms.earliest_s, terms.deadline_s, terms.step_s)
    return max(0, last - first + 1)


def fit_warning(terms: Terms) -> str:
    """Why LowCost must reject `terms` whatever the plan holds, or "" (§6: the allocation lies
    inside [a_j, d_j], and §5's stretching only lengthens a skyline). The refit fits the skyline
    on the runs that fit the window (models/skyline_window.py), so this remains for terms whose
    window was overridden shorter, or too few runs fit. Shown at sign-off: such a job keeps its
    static provisioning (decisions/static_fallback.py)."""
    room = window_room(terms)
    need = needed_steps(terms.memory_mb, terms.vcores)
    if need <= room:
        return ""
    return (f"the skyline needs {need} steps of {terms.step_s:g}s ({need * terms.step_s:g}s) but the window "
            f"[{terms.earliest_s:.1f}s, {terms.deadline_s:.1f}s] holds {room}: LowCost will reject it, so the job "
            "keeps its static provisioning (override the window or the skyline, or reject the SLO)")


def fit_note(terms: Terms) -> str:
    """How the reservation of `terms` departs from the plain §4/§5 result to fit the window, ""
    when it does not: the window rounded out to whole steps; the skyline fitted without the
    runs longer than the window (a run like them falls back to its static share at the end)."""
    notes = [window_rounded(terms.earliest_s, terms.deadline_s, terms.step_s)]
    if terms.longer_runs:
        notes.append(f"the skyline leaves out {terms.longer_runs} training run(s) longer than the window: a run "
                     "like them falls back to its static share when its reservation ends")
    return "; ".join(n for n in notes if n)


@dataclass(frozen=True)
class Terms:
    """What a reservation is planned from: the window of every period (seconds after the
    period start, period starts at grid_origin_s + n·period_s) and the skyline per step."""

    period_s: float
    earliest_s: float
    deadline_s: float
    grid_origin_s: float
    step_s: float
    memory_mb: tuple[int, ...]
    vcores: tuple[int, ...]
    problematic: bool = False
    longer_runs: int = 0           # training runs longer than the window, left out of the skyline (skyline_window.py)
    longest_run_s: float = 0.0     # the longest training run (0: unknown): when a run starts at once (static_fallback)
    instance_s: float | None = None  # a one-off's period start (reservation_schedule.plannable_terms; §6)


@dataclass(frozen=True)
class Proposal:
    """The inference's current proposal for one job: its SLO window (None: not actionable, see
    `slo_reason`) and skyline (None: see `skyline_reason`)."""

    job: str
    period_s: float | None
    earliest_s: float | None
    deadline_s: float | None
    grid_origin_s: float
    problematic: bool
    slo_reason: str
    step_s: float
    memory_mb: tuple[int, ...] | None
    vcores: tuple[int, ...] | None
    skyline_reason: str
    longer_runs: int = 0
    longest_run_s: float = 0.0

    @property
    def actionable(self) -> bool:
        return self.period_s is not None and self.earliest_s is not None and self.deadline_s is not None

    def terms(self) -> Terms | None:
        if not self.actionable or self.memory_mb is None or self.vcores is None:
            return None
        return Terms(self.period_s, self.earliest_s, self.deadline_s, self.grid_origin_s,  # type: ignore[arg-type]
                     self.step_s, self.memory_mb, self.vcores, self.problematic, self.longer_runs,
                     self.longest_run_s)

    @property
    def warning(self) -> str:
        """`fit_warning` of the proposed terms ("" when none or when they fit)."""
        terms = self.terms()
        return "" if terms is None else fit_warning(terms)


@dataclass(frozen=True)
class Override:
    """Owner-given values; None keeps the inferred one."""

    period_s: float | None = None
    earliest_s: float | None = None
    deadline_s: float | None = None
    skyline_scale: float = 1.0

    def __post_init__(self) -> None:
        for name in ("period_s", "earliest_s", "deadline_s"):
            v = getattr(self, name)
            if v is not None and (not math.isfinite(v) or v < 0 or (name == "period_s" and v <= 0)):
                raise SignOffError(f"{name} must be a finite number of seconds >= 0 (> 0 for a period), got {v!r}")
        if not (math.isfinite(self.skyline_scale) and self.skyline_scale > 0):
            raise SignOffError(f"skyline_scale must be > 0, got {self.skyline_scale!r}")


@dataclass(frozen=True)
class SloContract:
    job: str
    lifecycle: Lifecycle[ContractState]
    accepted: Terms | None = None
    override: Override | None = None
    by: str = ""

    @property
    def state(self) -> ContractState:
        return self.lifecycle.state


def new_contract(job: str, at: float) -> SloContract:
    return SloContract(job, Lifecycle.start(f"SLO of {job}", CONTRACT_TRANSITIONS, ContractState.PROPOSED, at,
                                            "proposed by the inference"))


def _move(c: SloContract, state: ContractState, at: float, reason: str, **changes: Any) -> SloContract:
    return replace(c, lifecycle=c.lifecycle.to(state, at, reason, keep=HISTORY_KEPT), **changes)


def accept(c: SloContract, proposal: Proposal | None, at: float, by: str, note: str = "") -> SloContract:
    """Sign off the current proposal as is (SignOffError when there is nothing to accept)."""
    terms = None if proposal is None else proposal.terms()
    if terms is None:
        why = "no proposal" if proposal is None else (proposal.slo_reason if not proposal.actionable
                                                       else proposal.skyline_reason)
        raise SignOffError(f"{c.job}: nothing to accept ({why}); override it instead")
    warned, fitted = fit_warning(terms), fit_note(terms)
    return _move(c, ContractState.ACCEPTED, at, f"accepted by {by or 'an operator'}" + (f": {note}" if note else "")
                 + (f" (warning: {warned})" if warned else "") + (f" (reserved as: {fitted})" if fitted else ""),
                 accepted=terms, override=None, by=by)


def override(c: SloContract, values: Override, at: float, by: str, note: str = "") -> SloContract:
    shown = ", ".join(f"{k}={v:g}" for k, v in asdict(values).items() if v is not None and not (k == "skyline_scale" and v == 1.0))
    return _move(c, ContractState.OVERRIDDEN, at, f"overridden by {by or 'an operator'}: {shown or 'nothing'}"
                 + (f" ({note})" if note else ""), accepted=None, override=values, by=by)


def reject(c: SloContract, at: float, by: str, reason: str = "") -> SloContract:
    return _move(c, ContractState.REJECTED, at, f"rejected by {by or 'an operator'}" + (f": {reason}" if reason else ""),
                 accepted=None, override=None, by=by)


def reset(c: SloContract, at: float, by: str) -> SloContract:
    return _move(c, ContractState.PROPOSED, at, f"reset to the inference by {by or 'an operator'}",
                 accepted=None, override=None, by=by)


def effective_terms(proposal: Proposal | None, contract: SloContract | None,
                    require_sign_off: bool) -> tuple[Terms | None, str]:
    """The terms to plan from, or None and why not (module docstring)."""
    state = contract.state if contract is not None else ContractState.PROPOSED
    if state is ContractState.REJECTED:
        return None, "rejected by its owner"
    if state is ContractState.ACCEPTED:
        assert contract is not None and contract.accepted is not None
        return contract.accepted, "the terms its owner accepted"
    if state is ContractState.OVERRIDDEN:
        assert contract is not None and contract.override is not None
        return _overridden(proposal, contract.override)
    if require_sign_off:
        return None, "waiting for its owner's sign-off (slo.require_sign_off)"
    if proposal is None:
        return None, "no proposal"
    terms = proposal.terms()
    if terms is None:
        return None, proposal.slo_reason if not proposal.actionable else f"no skyline: {proposal.skyline_reason}"
    return terms, "the inferred proposal (no sign-off required)"


def _overridden(p: Proposal | None, o: Override) -> tuple[Terms | None, str]:
    if p is None or p.memory_mb is None or p.vcores is None:
        return None, "overridden, but no skyline has been fitted for it yet"
    period = o.period_s if o.period_s is not None else p.period_s
    earliest = o.earliest_s if o.earliest_s is not None else p.earliest_s
    deadline = o.deadline_s if o.deadline_s is not None else p.deadline_s
    if period is None or earliest is None or deadline is None:
        return None, f"overridden, but the inference has no {'period' if period is None else 'window'} " \
                     f"and the override does not give it ({p.slo_reason})"
    if deadline <= earliest:
        return None, f"overridden window is empty: deadline {deadline:g}s <= earliest {earliest:g}s"
    scale = o.skyline_scale
    mem = tuple(int(math.ceil(m * scale)) for m in p.memory_mb)
    vc = tuple(int(math.ceil(v * scale)) for v in p.vcores)
    return Terms(period, earliest, deadline, p.grid_origin_s, p.step_s, mem, vc, p.problematic, p.longer_runs,
                 p.longest_run_s), \
        "the owner's override on top of the inference"


# --- persistence (history/morpheus_sqlite.py stores this document) --------------------------

def to_doc(c: SloContract) -> str:
    return json.dumps({
        "history": [[ch.at, ch.state.value, ch.reason] for ch in c.lifecycle.history],
        "accepted": None if c.accepted is None else asdict(c.accepted),
        "override": None if c.override is None else asdict(c.override),
        "by": c.by,
    }, sort_keys=True)


def from_doc(job: str, text: str) -> SloContract:
    d = json.loads(text)
    history = tuple(Change(float(at), ContractState(state), reason) for at, state, reason in d["history"])
    acc = d.get("accepted")
    accepted = None if acc is None else Terms(**{**acc, "memory_mb": tuple(acc["memory_mb"]),
                                                 "vcores": tuple(acc["vcores"])})
    ov = d.get("override")
    return SloContract(job, Lifecycle(f"SLO of {job}", CONTRACT_TRANSITIONS, history), accepted,
                       None if ov is None else Override(**ov), d.get("by", ""))
