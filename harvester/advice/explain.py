"""`harvester explain KIND ID`: why a node, a tenant or a job is where it is (DESIGN.md principle 4).

An operator asks "why did you kill my containers?", "why is this node at 3 vcores?". The answer
is the last decisions that touched the subject, each with its formula (the action's reason),
its inputs, the age of the data it was decided from, its fate, and the settings that would
change it — plus the subject's current state when a sidecar runs.

Sources (`ExplainSources`): the settings, `now`, the history store — the persisted decision
log (domain.DecisionRecord, written by the guard loop, kept `store.decision_log_days`), the
class model and margins, job runs, tenant slots — and, in the running sidecar only, the state
board (`LiveView`: the guard's current per-node view, its kills in flight, the job history,
Morpheus's reservations view and Jockey's control view).
The same explainers answer in the sidecar (GET /v1/explain/<kind>?id=ID&limit=N, registered by
the composition root from `explain_routes`) and in the CLI when no sidecar runs (live = None).

Kinds are registered, not hard-wired: `Explainers.add(kind, explainer, about)`.
`explain_subjects.builtin_explainers()` holds node, tenant, job and reservation (Morpheus's and
Jockey's, from advice/explain_reservation.py); a capability that lands later adds its kind there,
and both faces — the admin route and the CLI's store path — pick it up. A kind whose decisions
are not in the store's decision log (reservation: the board only) is `live_only`: the store
path says so instead of "nothing known". An explainer returns a document (`subject_doc`)
or None when it knows nothing about that id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from harvester.board.harvesting import GuardStatus, HarvestingView
from harvester.board.jockey import ControlView
from harvester.board.morpheus import MorpheusModel, ReservationsView
from harvester.config import Settings
from harvester.config_harvesting import HarvestingSettings
from harvester.domain import DecisionRecord
from harvester.history.store import HistoryStore

DAY_S = 86400.0
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class LiveView:
    """What only a running sidecar knows: the board's harvesting view and the guard's status."""

    harvesting: HarvestingView
    guard: GuardStatus
    snapshot_time: float | None = None  # time of the newest telemetry snapshot
    reservations: ReservationsView | None = None  # Morpheus's reservation loop (board/morpheus.py)
    jockey: ControlView | None = None             # Jockey's control loop (board/jockey.py)
    morpheus: MorpheusModel | None = None         # Morpheus's SLO / skyline model (board/morpheus.py)


@dataclass(frozen=True)
class ExplainSources:
    settings: Settings
    harvesting: HarvestingSettings  # resolved (app.harvesting_settings: the embedded default's rules)
    now: float
    store: HistoryStore
    live: LiveView | None = None

    @property
    def source(self) -> str:
        return "sidecar" if self.live is not None else "store"

    def since(self) -> float:
        """How far back the decision log goes (store.decision_log_days)."""
        return self.now - self.settings.store.decision_log_days * DAY_S


Explainer = Callable[[ExplainSources, str, int], "dict[str, Any] | None"]
Levers = Callable[[ExplainSources, DecisionRecord], "list[dict[str, Any]]"]  # the settings behind one decision
Known = Callable[[ExplainSources], Iterable[str]]  # the ids of a kind the sources know (for "did you mean")


def close_ids(subject: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Known ids an operator probably meant: those containing what was typed (`web-01` for
    `web-01.demo.harvester:45454`), then the closest spellings."""
    import difflib

    ids = sorted(set(known))
    typed = subject.lower()
    picks = [i for i in ids if typed and typed in i.lower() and i != subject]
    picks += [i for i in difflib.get_close_matches(subject, ids, n=n, cutoff=0.6) if i not in picks]
    return picks[:n]


@dataclass
class Explainers:
    """The kinds `harvester explain` knows: kind → (explainer, one line about it)."""

    kinds: dict[str, tuple[Explainer, str]] = field(default_factory=dict)
    known: dict[str, Known] = field(default_factory=dict)
    live_only: dict[str, str] = field(default_factory=dict)
    searched: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, explainer: Explainer, about: str, known: Known | None = None,
            live_only: str | None = None, searched: str | None = None) -> None:
        """`known` lists the kind's ids, so that an unknown id gets a "did you mean"; `live_only`
        says why the store cannot answer for this kind (its decisions are not in the decision log);
        `searched` what "nothing known" looked at (default: the decision log, class model, job runs)."""
        if kind in self.kinds:
            raise ValueError(f"explain kind {kind!r} registered twice")
        self.kinds[kind] = (explainer, about)
        if known is not None:
            self.known[kind] = known
        if live_only is not None:
            self.live_only[kind] = live_only
        if searched is not None:
            self.searched[kind] = searched

    def index(self) -> dict[str, Any]:
        return {"kinds": {k: about for k, (_, about) in sorted(self.kinds.items())},
                "usage": "GET /v1/explain/<kind>?id=ID[&limit=N]; harvester explain <kind> ID"}

    def explain(self, kind: str, subject: str, sources: ExplainSources, limit: int = DEFAULT_LIMIT) -> tuple[int, dict[str, Any]]:
        """(HTTP-like status, document): 404 for an unknown kind or a subject nothing is known about."""
        if kind not in self.kinds:
            return 404, {"error": f"unknown kind {kind!r}; known: {', '.join(sorted(self.kinds))}"}
        if sources.live is None and kind in self.live_only:
            return 404, {"error": f"{kind} {subject!r}: {self.live_only[kind]}", "did_you_mean": []}
        doc = self.kinds[kind][0](sources, subject, limit)
        if doc is None:
            days = sources.settings.store.decision_log_days
            where = "the running sidecar" if sources.live is not None else "the history store"
            hint = close_ids(subject, self.known[kind](sources)) if kind in self.known else []
            meant = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            searched = self.searched.get(kind) or (f"decisions of the last {days:g} days, store.decision_log_days; "
                                                   "the current class model and job runs")
            return 404, {"error": f"nothing known about {kind} {subject!r} in {where} ({searched}){meant}",
                         "did_you_mean": hint}
        return 200, doc


# --- documents ---------------------------------------------------------------------------

def subject_doc(kind: str, subject: str, sources: ExplainSources, *, summary: list[str],
                decisions: list[DecisionRecord], settings: list[dict[str, Any]], levers_of: Levers | None = None,
                **facts: Any) -> dict[str, Any]:
    """The common shape of every explanation (the CLI renders any kind from it); `levers_of`
    names the settings behind each decision (default: the guard's, `guard_levers`)."""
    return {"kind": kind, "id": subject, "source": sources.source, "as_of": sources.now, "summary": summary,
            "settings": settings, "decisions": [decision_doc(d, sources, levers_of or guard_levers) for d in decisions],
            **facts}


def decision_doc(d: DecisionRecord, sources: ExplainSources, levers_of: Levers) -> dict[str, Any]:
    return {
        "at": d.at, "age_s": max(0.0, sources.now - d.at), "loop": d.loop, "action": d.kind, "target": d.target,
        "detail": d.detail, "fate": d.fate, "formula": d.reason, "inputs": dict(d.inputs),
        "data_as_of": d.data_as_of, "data_age_s": None if d.data_as_of is None else max(0.0, d.at - d.data_as_of),
        "node_id": d.node_id, "tenant": d.tenant, "app_id": d.app_id, "stimulus_id": d.stimulus_id,
        "settings": levers_of(sources, d),
    }


def setting(sources: ExplainSources, key: str, effect: str) -> dict[str, Any]:
    """One setting with its current value (harvesting.* as resolved) and what changing it does."""
    node: Any = sources.harvesting if key.startswith("harvesting.") else sources.settings
    for part in key.split(".")[1:] if key.startswith("harvesting.") else key.split("."):
        node = getattr(node, part)
    if hasattr(node, "model_dump"):
        node = node.model_dump()
    elif isinstance(node, list):
        node = [x.model_dump() if hasattr(x, "model_dump") else x for x in node]
    return {"key": key, "value": node, "effect": effect}


#: Settings behind the guard's capacity formula (decisions/guard.py), whatever the outcome.
_CAPACITY = (
    ("harvesting.reserve.quantile", "higher keeps a larger reserve per class: less capacity, fewer kills"),
    ("harvesting.reserve.floor", "the smallest reserve (fraction of the node's cores)"),
    ("harvesting.node_resources.physical_cores", "the cores the formula starts from (null: what telemetry reports)"),
)
#: By outcome label / fate: the settings that decide it.
_BY_OUTCOME = (
    ("hysteresis", (("harvesting.guard.min_increase_vcores", "smaller sends smaller increases"),
                    ("harvesting.guard.min_decrease_vcores", "smaller sends smaller decreases"))),
    ("rate_limit", (("harvesting.guard.min_interval_s", "shorter lets a node's capacity rise more often"),)),
    ("stale", (("telemetry.stale_after_s", "older data counts as fresh: the guard acts on it"),
               ("harvesting.guard.stale_after_s", "per-node data age limit (null: telemetry.stale_after_s)"))),
    ("no_utilization", (("harvesting.guard.freeze_on_stale", "false: no freeze at the allocation without utilization"),)),
    ("freeze", (("harvesting.guard.freeze_on_stale", "false: no freeze at the allocation without utilization"),)),
    ("cut", (("harvesting.guard.kill_mechanism", "who kills when the allocation no longer fits"),
             ("harvesting.guard.overcommit_timeout_ms", "how long the RM waits before it kills (rm_overcommit)"))),
    ("would send", (("harvesting.actuate", "true: send the decisions to the RM (false: dry run)"),)),
    ("would_send", (("harvesting.actuate", "true: send the decisions to the RM (false: dry run)"),)),
    ("cold start", (("harvesting.reserve.cold_start", "the reserve of a node whose class has no fitted margin"),)),
    ("class none", (("harvesting.reserve.cold_start", "the reserve of a node whose tenant has no class yet"),)),
)
_KILL = (
    ("harvesting.guard.kill_mechanism", "rm_overcommit: the RM kills youngest non-AM containers; signals: we pick"),
    ("harvesting.guard.escalation_delay_s", "GRACEFUL_SHUTDOWN → FORCEFUL_SHUTDOWN after this long"),
    ("harvesting.guard.kill_ams", "whether ApplicationMasters may be victims"),
    ("harvesting.reserve.quantile", "a larger reserve leaves fewer spikes to kill for"),
)


def levers(sources: ExplainSources, action: str, outcome: str, fate: str, reason: str) -> list[dict[str, Any]]:
    """The settings that would change a guard decision (key, current value, effect)."""
    pairs = list(_KILL if action == "kill" else _CAPACITY)
    text = f"{outcome} {fate} {reason}"
    for needle, extra in _BY_OUTCOME:
        if needle in text:
            pairs += [p for p in extra if p not in pairs]
    return [setting(sources, key, effect) for key, effect in pairs]


def guard_levers(sources: ExplainSources, d: DecisionRecord) -> list[dict[str, Any]]:
    return levers(sources, d.kind, str(d.inputs.get("outcome", "")), d.fate, d.reason)


def explain_routes(explainers: Explainers, sources: Callable[[], ExplainSources]) -> dict[str, Callable[[Any], Any]]:
    """Admin routes: /v1/explain (the kinds) and /v1/explain/<kind>?id=ID&limit=N per kind."""
    from harvester.advice.admin_http import Request, Response

    def index(req: Request) -> Response:
        return Response.json(200, explainers.index())

    def route(kind: str) -> Callable[[Request], Response]:
        def handler(req: Request) -> Response:
            subject = (req.query.get("id") or [""])[0]
            if not subject:
                return Response.json(400, {"error": f"give the {kind} as ?id=…"})
            try:
                limit = int((req.query.get("limit") or [str(DEFAULT_LIMIT)])[0])
            except ValueError:
                return Response.json(400, {"error": "limit must be an integer"})
            status, doc = explainers.explain(kind, subject, sources(), max(0, limit))
            return Response.json(status, doc)
        return handler

    routes: dict[str, Callable[[Any], Any]] = {"/v1/explain": index}
    routes.update({f"/v1/explain/{kind}": route(kind) for kind in sorted(explainers.kinds)})
    return routes
