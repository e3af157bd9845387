"""Local checks for every write, run BEFORE any HTTP request (the RM will not protect the
cluster: fixtures README "Behaviour that surprises people").

Each ``check_*`` returns a list of :class:`~rm_client.errors.Problem` (empty = fine); the
client raises :class:`~rm_client.errors.RMValidationError` with all of them. Messages name the
field, the value and why, and cite the recorded RM behaviour the check prevents.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from rm_client.errors import Problem
from rm_client.ids import check_app_id, check_container_id, check_node_id, check_reservation_id
from rm_client.wire.bodies import AppSubmission
from rm_client.wire.reservations import DAY_MS, Interpreter, ReservationDefinition, ReservationRequest
from rm_client.wire.resources import JAVA_LONG_MAX, Resource

__all__ = [
    "JAVA_INT_MAX",
    "SignalCommand",
    "check_app_submission",
    "check_node_resource_update",
    "check_priority",
    "check_queue",
    "check_reservation_definition",
    "check_reservation_submit",
    "check_signal",
]

JAVA_INT_MAX = 2_147_483_647


class SignalCommand(StrEnum):
    """The commands the RM accepts for POST /containers/{id}/signal/{command}
    (capture ``err-container-signal-bad-command``)."""

    OUTPUT_THREAD_DUMP = "OUTPUT_THREAD_DUMP"  # SIGQUIT: a JVM prints its threads; kills `sleep`!
    GRACEFUL_SHUTDOWN = "GRACEFUL_SHUTDOWN"  # SIGTERM ~0.9 s later, exit 143
    FORCEFUL_SHUTDOWN = "FORCEFUL_SHUTDOWN"  # SIGKILL ~0.3 s later, exit 137


def _is_int(v: Any) -> bool:
    return type(v) is int  # bool is an int subclass: True must not pass as 1


def _int(problems: list[Problem], v: Any, field: str, lo: int | None = None, hi: int | None = None,
         why_lo: str = "") -> bool:
    """Append a problem unless ``v`` is an int within [lo, hi]; True when it passed."""
    if not _is_int(v):
        problems.append(Problem(field, f"must be an integer, got {type(v).__name__} {v!r}"))
        return False
    if lo is not None and v < lo:
        problems.append(Problem(field, f"{v} is below {lo}" + (f": {why_lo}" if why_lo else "")))
        return False
    if hi is not None and v > hi:
        problems.append(Problem(field, f"{v} is above {hi}"))
        return False
    return True


def _opt(problem: Problem | None) -> list[Problem]:
    return [problem] if problem is not None else []


def check_queue(queue: Any, field: str = "queue") -> list[Problem]:
    """A queue name the RM can route: non-empty, no whitespace, no URL separators."""
    if not isinstance(queue, str) or not queue.strip():
        return [Problem(field, "missing; give the queue's full path, e.g. 'root.default'")]
    if any(c.isspace() for c in queue) or any(c in queue for c in "/?#&"):
        return [Problem(field, f"{queue!r} contains whitespace or one of / ? # &")]
    if queue.startswith(".") or queue.endswith(".") or ".." in queue:
        return [Problem(field, f"{queue!r} has an empty path element")]
    return []


def check_priority(priority: Any, field: str = "priority") -> list[Problem]:
    """Any int32 is sent (the RM clamps above the cluster maximum and accepts negatives)."""
    problems: list[Problem] = []
    _int(problems, priority, field, -JAVA_INT_MAX - 1, JAVA_INT_MAX)
    return problems


def check_node_resource_update(node_id: Any, resource: Any, overcommit_timeout_ms: Any, *,
                               allow_zero: bool = False) -> list[Problem]:
    """POST /nodes/{id}/resource. The RM silently sets 0 MB / 0 vcores for a body without
    ``resource`` and stores negative values as-is (captures ``nodes-id-resource-missing-
    resource``, ``-negative-accepted``, ``-wrapped-root``), so: a resource is required, no
    negatives, and zero memory or vcores (which takes the node out of scheduling) only with
    ``allow_zero=True``. ``overcommit_timeout_ms`` is MILLISECONDS, an int >= -1 (-1 = never
    kill, run over-committed; 0 = kill the youngest non-AM containers now)."""
    problems = _opt(check_node_id(node_id))
    if resource is None:
        problems.append(Problem("resource", "missing: the RM would silently set the node to 0 MB / 0 vcores"))
    elif not isinstance(resource, Resource):
        problems.append(Problem("resource", f"must be a rm_client Resource, got {type(resource).__name__}"))
    else:
        for name, value, hi in (("memory_mb", resource.memory_mb, JAVA_LONG_MAX),
                                ("vcores", resource.vcores, JAVA_INT_MAX)):
            field = f"resource.{name}"
            if not _int(problems, value, field, 0, hi,
                        why_lo="the RM would store a negative capacity as-is"):
                continue
            if value == 0 and not allow_zero:
                problems.append(Problem(field, "0 takes the node out of scheduling (its containers become "
                                        "over-committed); pass allow_zero=True to do that on purpose"))
        if resource.others:
            # The accepted body form carries memory and vCores only: other types would be dropped.
            problems.append(Problem("resource.others", "only memory and vcores can be set through "
                                    f"this endpoint's body; got {', '.join(o.name for o in resource.others)}"))
    _int(problems, overcommit_timeout_ms, "overcommit_timeout_ms", -1, JAVA_INT_MAX,
         why_lo="use -1 (never kill) or a delay in milliseconds >= 0")
    return problems


def _check_request(problems: list[Problem], r: Any, field: str, window_ms: int | None) -> int | None:
    """Check one ReservationRequest; returns its duration when valid."""
    if not isinstance(r, ReservationRequest):
        problems.append(Problem(field, f"must be a ReservationRequest, got {type(r).__name__}"))
        return None
    cap = r.capability
    if not isinstance(cap, Resource):
        problems.append(Problem(f"{field}.capability", "must be a Resource"))
    else:
        _int(problems, cap.memory_mb, f"{field}.capability.memory_mb", 1, JAVA_LONG_MAX)
        _int(problems, cap.vcores, f"{field}.capability.vcores", 1, JAVA_INT_MAX)
    n_ok = _int(problems, r.num_containers, f"{field}.num_containers", 1, JAVA_INT_MAX)
    if _int(problems, r.min_concurrency, f"{field}.min_concurrency", 1, JAVA_INT_MAX) and n_ok \
            and r.min_concurrency > r.num_containers:
        problems.append(Problem(f"{field}.min_concurrency",
                                f"{r.min_concurrency} exceeds num_containers {r.num_containers}"))
    if not _int(problems, r.duration_ms, f"{field}.duration_ms", 1, JAVA_LONG_MAX):
        return None
    if window_ms is not None and r.duration_ms > window_ms:
        problems.append(Problem(f"{field}.duration_ms",
                                f"{r.duration_ms} ms does not fit the arrival..deadline window of {window_ms} ms"))
    return r.duration_ms


def check_reservation_definition(d: Any, field: str = "definition") -> list[Problem]:
    """arrival < deadline; every request sane and fitting the window (the sum of durations for
    the sequential interpreters); interpreter a valid ordinal (a string is silently stored as
    R_ANY, 7 gives HTTP 500); recurrence 0 or a period in ms that divides 86 400 000 with the
    window inside one period (the RM refuses a window longer than the period)."""
    if not isinstance(d, ReservationDefinition):
        return [Problem(field, f"must be a ReservationDefinition, got {type(d).__name__}")]
    problems: list[Problem] = []
    a_ok = _int(problems, d.arrival_ms, f"{field}.arrival_ms", 0, JAVA_LONG_MAX)
    d_ok = _int(problems, d.deadline_ms, f"{field}.deadline_ms", 0, JAVA_LONG_MAX)
    window: int | None = None
    if a_ok and d_ok:
        if d.arrival_ms >= d.deadline_ms:
            problems.append(Problem(f"{field}.deadline_ms",
                                    f"deadline {d.deadline_ms} must be after arrival {d.arrival_ms}"))
        else:
            window = d.deadline_ms - d.arrival_ms
    interp = d.interpreter
    if isinstance(interp, bool) or not isinstance(interp, int) or interp not in tuple(Interpreter):
        problems.append(Problem(f"{field}.interpreter",
                                f"{interp!r} is not an Interpreter ordinal 0..3 (R_ANY, R_ALL, R_ORDER, "
                                "R_ORDER_NO_GAP); the RM stores a string as R_ANY and answers 500 above 3"))
        interp = None
    if not isinstance(d.requests, tuple | list) or not d.requests:
        problems.append(Problem(f"{field}.requests", "at least one ReservationRequest is required"))
    else:
        durations = [_check_request(problems, r, f"{field}.requests[{i}]", window) for i, r in enumerate(d.requests)]
        sequential = interp in (Interpreter.R_ORDER, Interpreter.R_ORDER_NO_GAP)
        if sequential and window is not None and None not in durations:
            total = sum(x for x in durations if x is not None)
            if total > window:
                problems.append(Problem(f"{field}.requests",
                                        f"{Interpreter(interp).name} runs the stages one after another: "
                                        f"{total} ms of durations exceed the {window} ms window"))
    if not isinstance(d.name, str):
        problems.append(Problem(f"{field}.name", "must be a string"))
    _int(problems, d.priority, f"{field}.priority", -JAVA_INT_MAX - 1, JAVA_INT_MAX)
    period = d.recurrence_period_ms
    if _int(problems, period, f"{field}.recurrence_period_ms", 0, DAY_MS,
            why_lo="0 means not recurring; a period is a positive number of ms") and period > 0:
        if DAY_MS % period:
            problems.append(Problem(f"{field}.recurrence_period_ms",
                                    f"{period} ms does not divide one day (86400000 ms)"))
        if window is not None and window > period:
            problems.append(Problem(f"{field}.recurrence_period_ms",
                                    f"the arrival..deadline window ({window} ms) must fit in one period ({period} ms)"))
    return problems


def check_reservation_submit(reservation_id: Any, queue: Any, definition: Any) -> list[Problem]:
    """Submit: a ``reservation_<ts>_<n>`` id from new_reservation(), the reservable queue
    (its full path, e.g. ``root.default``, works for the apps later submitted into it) and a
    valid definition."""
    return (_opt(check_reservation_id(reservation_id)) + check_queue(queue)
            + check_reservation_definition(definition))


def check_signal(container_id: Any, command: Any) -> list[Problem]:
    problems = _opt(check_container_id(container_id))
    if command not in tuple(SignalCommand):
        problems.append(Problem("command", f"{command!r} is not one of {', '.join(SignalCommand)}"))
    return problems


def _check_names(problems: list[Problem], values: Any, field: str, forbid: str = "") -> None:
    if not isinstance(values, tuple | list):
        problems.append(Problem(field, f"must be a tuple, got {type(values).__name__}"))
        return
    for i, v in enumerate(values):
        if not isinstance(v, str) or not v or any(c in v for c in forbid):
            problems.append(Problem(f"{field}[{i}]", f"{v!r} must be a non-empty string without {forbid!r}"))


def _check_environment(problems: list[Problem], env: Any) -> None:
    if not isinstance(env, tuple | list):
        problems.append(Problem("environment", f"must be a tuple of (name, value), got {type(env).__name__}"))
        return
    for i, pair in enumerate(env):
        ok = isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[1], str)
        if not ok:
            problems.append(Problem(f"environment[{i}]", f"{pair!r} must be a (name, value) pair of strings"))
        else:
            _check_names(problems, [pair[0]], f"environment[{i}].name", forbid="=")


def check_app_submission(s: Any) -> list[Problem]:
    """POST /apps: a new-application id, a queue (full path when inside a reservation), a
    non-empty AM command, a positive AM resource and at least one attempt."""
    if not isinstance(s, AppSubmission):
        return [Problem("submission", f"must be an AppSubmission, got {type(s).__name__}")]
    problems = _opt(check_app_id(s.application_id, "application_id")) + check_queue(s.queue)
    if not isinstance(s.application_name, str):
        problems.append(Problem("application_name", "must be a string"))
    if not isinstance(s.command, str) or not s.command.strip():
        problems.append(Problem("command", "the AM container needs a non-empty shell command"))
    if not isinstance(s.resource, Resource):
        problems.append(Problem("resource", "must be a Resource"))
    else:
        _int(problems, s.resource.memory_mb, "resource.memory_mb", 1, JAVA_LONG_MAX)
        _int(problems, s.resource.vcores, "resource.vcores", 1, JAVA_INT_MAX)
    _int(problems, s.max_app_attempts, "max_app_attempts", 1, JAVA_INT_MAX)
    if s.reservation_id is not None:
        problems += _opt(check_reservation_id(s.reservation_id))
        if isinstance(s.queue, str) and not s.queue.startswith("root."):
            problems.append(Problem("queue", f"{s.queue!r}: apps inside a reservation must name the full "
                                    "queue path (e.g. 'root.default'); the short name fails"))
    if s.priority is not None:
        problems += check_priority(s.priority)
    _check_names(problems, s.tags, "tags", forbid=",")
    _check_environment(problems, s.environment)
    return problems
