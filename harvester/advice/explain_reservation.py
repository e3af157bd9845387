"""`harvester explain reservation ID`: why a reservation is what it is (advice/explain.py says how).

ID is the RM's reservation id (reservation_…), Morpheus's record key (job@period), or a job's
name (then its reservation open now, else its next one; for a Jockey job the one it drives).
The answer comes from the board, so only a running sidecar gives it:
- Morpheus (paper 002 §6-§8, loop/morpheus_reservations.py): the record's state and status
  history (reconcile: submitted, listed, drifted, lost, ended, deleted — each with its reason),
  its events, LowCost's placement of the job (or why it is not planned), the loop's actions on
  it (submit / renew, update: drift or re-plan, delete) with their fate, DRA grants (§7's
  ρ × R_recent rule), nudges that named it, and who owns it (handed over to Jockey);
- Jockey (paper 001 §4.3, loop/jockey.py): the job it drives, the last control decision (rule,
  allocation, predicted finish, LowCost's admission, fate), and every resize it sent.
Reservation decisions are not written to the store's decision log (only the guard's are), so
`--store` cannot answer: the kind is registered `live_only` and says so.
"""

from __future__ import annotations

from typing import Any

from harvester.advice.explain import ExplainSources, setting, subject_doc
from harvester.advice.jockey_http import job_doc
from harvester.advice.morpheus_documents import record_doc
from harvester.board.jockey import ControlView, JobControl
from harvester.board.morpheus import ReservationsView
from harvester.decisions.reservation_lifecycle import ManagedReservation, ReservationState
from harvester.domain import DecisionRecord
from harvester.timefmt import span, when

ABOUT = "a reservation (the RM's reservation_… id, Morpheus's job@period key, or a job name): its state, " \
        "Morpheus's plan/submit/update/delete, DRA grants, nudges, Jockey's resizes"
LIVE_ONLY = ("reservation decisions (Morpheus's and Jockey's) are kept on the running sidecar's board, not in the "
             "store's decision log: ask the running sidecar (`harvester serve`; --admin URL)")
SEARCHED = "Morpheus's reservation records and recent actions, Jockey's jobs and resizes"
MORPHEUS = "morpheus-reservations"


def _views(s: ExplainSources) -> tuple[ReservationsView, ControlView]:
    live = s.live
    return (ReservationsView() if live is None or live.reservations is None else live.reservations,
            ControlView() if live is None or live.jockey is None else live.jockey)


def known_reservations(s: ExplainSources) -> list[str]:
    view, ctl = _views(s)
    return [*(r.reservation_id for r in view.records if r.reservation_id), *(r.key for r in view.records),
            *(j.reservation_id for j in ctl.jobs if j.reservation_id), *(j.job for j in ctl.jobs if j.reservation_id),
            *{r.job for r in view.records}]


def records_of(view: ReservationsView, subject: str, now: float) -> list[ManagedReservation]:
    by_id = [r for r in view.records if subject in (r.reservation_id, r.key)]
    if by_id:
        return by_id
    mine = [r for r in view.records if r.job == subject]
    if not mine:
        return []
    current = view.current(subject, now)
    return [current if current is not None else max(mine, key=lambda r: (r.spec.arrival_ms, r.lifecycle.since))]


def _jockey(ctl: ControlView, subject: str, ids: set[str], by_name: bool) -> list[JobControl]:
    return [j for j in ctl.jobs if j.reservation_id and (j.reservation_id == subject or j.reservation_id in ids
                                                         or (by_name and j.job == subject))]


def _morpheus_decisions(view: ReservationsView, r: ManagedReservation) -> list[DecisionRecord]:
    target = r.reservation_id or r.key
    ids = {"key": r.key, "job": r.job}
    out = [DecisionRecord(c.at, MORPHEUS, "lifecycle", target, c.reason, "recorded", detail=f"→ {c.state.value}",
                          data_as_of=c.at, inputs=ids) for c in r.lifecycle.history]
    out += [DecisionRecord(at, MORPHEUS, "event", target, e, "noted", data_as_of=at, inputs=ids) for at, e in r.events]
    out += [DecisionRecord(a.at, MORPHEUS, a.kind, target, a.reason, a.fate, data_as_of=a.as_of, inputs=ids)
            for a in view.actions if a.key.split(" (", 1)[0] == r.key]
    out += [DecisionRecord(g.at, MORPHEUS, "dra_grant", target, g.reason, g.fate, detail=f"level {g.level}",
                           data_as_of=g.as_of, inputs={**ids, "level": g.level, "until": g.until})
            for g in view.grants if g.key == r.key]
    out += [DecisionRecord(n.at, "guard", "nudge", target, "; ".join(n.reasons),
                           (f"done on {n.node_id}" if n.node_id else "covered by the guard's own update") if n.done
                           else f"deferred: {n.note}", data_as_of=n.requested_at, node_id=n.node_id or "",
                           inputs={**ids, "note": n.note})
            for n in view.nudges if any(target in why or r.key in why for why in n.reasons)]
    return out


def _jockey_decisions(ctl: ControlView, ids: set[str]) -> list[DecisionRecord]:
    return [DecisionRecord(d.at, "jockey", "resize", d.reservation_id, d.reason, d.fate, app_id=d.app_id,
                           detail=f"{d.previous} → {d.allocation} containers", data_as_of=d.as_of,
                           inputs={"job": d.job, "rule": d.rule, "previous": d.previous, "allocation": d.allocation})
            for d in ctl.decisions if d.reservation_id in ids]


def record_lines(view: ReservationsView, r: ManagedReservation, now: float) -> list[str]:
    last = r.lifecycle.history[-1]
    stages = "+".join(f"{st.containers}×<{st.container.memory_mb} MB, {st.container.vcores} vc> for "
                      f"{st.duration_ms / 1000:.0f} s" for st in r.spec.stages)
    lines = [f"Morpheus {r.key} ({r.reservation_id or 'no id yet'}): {r.state.value} for {span(now - r.lifecycle.since)} "
             f"— {last.reason}",
             f"window {when(r.spec.arrival_ms / 1000, now)} .. {when(r.spec.deadline_ms / 1000, now)}, "
             f"{'every ' + span(r.spec.recurrence_ms / 1000) + ', ' if r.spec.recurrence_ms else ''}"
             f"stages {stages or '-'}, named {r.spec.name!r}"]
    if r.state is ReservationState.PLANNED and r.refusals:
        retry = "at the next tick" if r.retry_at is None or r.retry_at <= now else f"at {when(r.retry_at, now)}"
        lines.append(f"refused {r.refusals} time(s) by the RM for lack of capacity (last: {r.last_error}); the submit is "
                     f"tried again {retry}, the wait doubling up to morpheus.reservations.refused_retry_max_s, while the "
                     "window can still be submitted")
    planned = next((e for e in view.planned if e.job == r.job), None)
    if planned is not None:
        lines.append(f"LowCost (§6) placed {r.job} at offset {planned.placement.start} of {planned.placement.period_steps} "
                     f"steps, terms from {planned.why}: {planned.placement.reason}")
    elif r.job in view.not_planned:
        lines.append(f"{r.job} is not in the plan: {view.not_planned[r.job]}")
    if r.grant_until is not None and r.grant_until > now:
        lines.append(f"a DRA grant (§7) holds it above its skyline for {r.grant_until - now:.0f} s more")
    why_no_grant = view.dra_skipped.get(r.key) or (view.dra_skipped.get(r.reservation_id) if r.reservation_id else None)
    if why_no_grant:
        lines.append(f"no DRA grant now: {why_no_grant}")
    owner = view.handed_over.get(r.reservation_id or "")
    if owner:
        lines.append(f"handed over to {owner}: Morpheus follows its size from the RM's list (no drift correction, "
                     "re-plan or DRA grant); the owner's resizes pass LowCost's admission")
    if r.last_error:
        lines.append(f"last error: {r.last_error}")
    if not view.actuate:
        lines.append("morpheus.actuate is false (or nothing is sent): actions are a dry run")
    return lines


def jockey_line(j: JobControl) -> str:
    """One line of Jockey's control of a job (paper 001 §4.3): its state, allocation and rule."""
    deadline = "" if j.utility is None else f" (deadline {j.utility.deadline_s:g} s, {j.utility_source})"
    if j.state == "idle":
        return f"Jockey drives {j.job}{deadline}: idle — {j.note or 'no running app'}"
    admitted = "" if j.admitted is None or j.admitted == j.decided else f", LowCost admitted {j.admitted}"
    finish = "" if j.predicted_finish_s is None else f", predicted finish {j.predicted_finish_s:.0f} s after its start"
    return (f"Jockey drives {j.job}{deadline}, app {j.app_id or '-'}: {j.state}, holds {j.allocation}, "
            f"rule {j.rule or '-'} decided {j.decided}{admitted}{finish}; update {j.fate or '-'}: {j.reason or j.note}")


# --- the settings behind each decision -----------------------------------------------------

_R = "morpheus.reservations."
_BY_TEXT = (
    ("renew", ((_R + "renew_lead_s", "a window's reservation is submitted this long ahead"),
               (_R + "min_lead_s", "a window opening sooner than this is no longer submitted"))),
    ("drift", ((_R + "correct_drift", "false: a definition the RM changed is reported, not updated back"),)),
    ("DRIFTED", ((_R + "correct_drift", "false: a definition the RM changed is reported, not updated back"),)),
    ("re-planned", (("morpheus.slo.require_sign_off", "true: only signed-off terms are planned"),
                    ("morpheus.plan.capacity_fraction", "the share of the plan queue LowCost may plan"))),
    ("no longer planned", (("morpheus.slo.require_sign_off", "true: only signed-off terms are planned"),)),
    ("not admitted", (("morpheus.plan.capacity_fraction", "a larger share lets LowCost admit larger resizes"),)),
    ("REJECTED", (("morpheus.plan.capacity_fraction", "LowCost plans into this share of the plan queue"),)),
    ("lack of capacity", ((_R + "refused_retry_max_s", "the longest wait between two submits the RM refused for lack "
                                                      "of capacity"),)),
    ("LOST", ((_R + "confirm_grace_s", "how long a submitted reservation may be missing from the RM's list"),)),
    ("ended", ((_R + "delete_ended_after_s", "an ended one-off reservation is deleted this long after its window"),)),
    ("dra_grant", (("morpheus.dra.rho", "a grant is at most rho × the recent skyline allocation"),
                   ("morpheus.dra.recent_window_s", "the recent window of §7"),
                   ("morpheus.dra.grant_s", "how long a grant lasts before DRA looks again"),
                   ("morpheus.dra.enabled", "false: no dynamic reprovisioning"))),
    ("nudge", (("morpheus.nudge.enabled", "false: no queue-capacity nudges (3.3.6 leaves the queue stale)"),
               ("morpheus.nudge.settle_s", "the wait after a boundary before the nudge"))),
)
_JOCKEY = (
    ("jockey.quantile", "the quantile of C(p, a) taken as the remaining time"),
    ("jockey.slack", "multiplies the predicted remaining time"),
    ("jockey.dead_zone", "no lowering while the current allocation finishes within this fraction of the deadline"),
    ("jockey.lower_fraction", "share of the gap released per period when lowering"),
    ("jockey.min_update_interval_s", "at most one update per job this often"),
)


def reservation_levers(s: ExplainSources, d: DecisionRecord) -> list[dict[str, Any]]:
    """The settings that would change one reservation decision (key, current value, effect)."""
    pairs: list[tuple[str, str]] = list(_JOCKEY) if d.loop == "jockey" else []
    text = f"{d.kind} {d.detail} {d.fate} {d.reason}"
    for needle, extra in _BY_TEXT:
        if needle in text:
            pairs += [p for p in extra if p not in pairs]
    if "dry_run" in d.fate:
        pairs.append(("jockey.actuate" if d.loop == "jockey" else "morpheus.actuate", "true: send the updates to the RM"))
    return [setting(s, key, effect) for key, effect in pairs]


def explain_reservation(s: ExplainSources, subject: str, limit: int) -> dict[str, Any] | None:
    view, ctl = _views(s)
    records = records_of(view, subject, s.now)
    ids = {r.reservation_id for r in records if r.reservation_id} | ({subject} if subject.startswith("reservation_") else set())
    jockey = _jockey(ctl, subject, ids, by_name=not records)
    ids |= {j.reservation_id for j in jockey}
    decisions = [d for r in records for d in _morpheus_decisions(view, r)] + _jockey_decisions(ctl, ids)
    if not records and not jockey and not decisions:
        return None
    decisions = sorted(decisions, key=lambda d: d.at)[::-1]  # newest first; within a tick, the action first
    summary = [line for r in records for line in record_lines(view, r, s.now)]
    if not records:
        summary.append("not one of Morpheus's reservations (none of its records names it)")
    summary += [jockey_line(j) for j in jockey]
    settings = [setting(s, "morpheus.reservations.mode", "one_off: one reservation per period; recurring: one per job"),
                setting(s, "morpheus.reservations.control_period_s", "how often reservations are reconciled"),
                setting(s, "morpheus.actuate", "false: Morpheus plans and publishes only")]
    if jockey:
        settings.append(setting(s, "jockey.actuate", "false: Jockey decides and publishes only"))
    return subject_doc("reservation", subject, s, summary=summary, decisions=decisions[:limit], settings=settings,
                       levers_of=reservation_levers, reservations=[record_doc(r) for r in records],
                       jockey=[job_doc(j) for j in jockey])
