"""The RM REST endpoints the client speaks: method, path, idempotency (and why), decoder.

This table is the one place where "may this call be repeated?" is decided (DESIGN.md
principle 11), and :func:`decode_answer` is the one path from an HTTP answer to a model or an
:class:`~rm_client.errors.RMError`, used by the client and by the capture contract tests. The
emulator can route with :func:`match`.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from rm_client.errors import RMDecodeError, error_for_response
from rm_client.wire import app_ops, apps, attempts, cluster, labels, nodes, reservations, scheduler
from rm_client.wire._json import loads
from rm_client.wire.nodes_typed import decode_node_raw
from rm_client.wire.streamed import FALLBACK, decode_list_streamed

__all__ = ["ENDPOINTS", "Endpoint", "decode_answer", "match"]

ROOT = "/ws/v1/cluster"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One RM endpoint. ``decode``: JSON document -> model; ``encode``: model -> JSON document
    (for the emulator). Both None: the RM answers the fixed body ``fixed_body`` (empty for
    202 submits and 200 signals, ``{}`` for reservation update/delete) and it is not read."""

    name: str
    method: str
    template: str
    idempotent: bool
    decode: Callable[[Any], Any] | None
    encode: Callable[[Any], Any] | None
    why: str = ""
    fixed_body: bytes | None = None
    merge_repeated_keys: bool = True  # False only where no DAO holds a map (speed: /nodes)
    #: bytes -> model without the whole parsed document in memory, or FALLBACK for the plain
    #: path (the big list answers, issue 29; rm_client.wire.streamed)
    decode_body: Callable[[bytes], Any] | None = None
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pattern = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>[^/]+)", re.escape(self.template))
        object.__setattr__(self, "regex", re.compile(pattern + r"/?"))

    def path(self, **params: str) -> str:
        """The request path with each parameter percent-encoded (``:`` kept for node ids)."""
        return self.template.format(**{k: quote(v, safe=":") for k, v in params.items()})


def _nodes_body(body: bytes) -> Any:
    return decode_list_streamed(body, "nodes", "node", nodes.NODE, merge_repeated_keys=False,
                                element=decode_node_raw)


def _apps_body(body: bytes) -> Any:
    return decode_list_streamed(body, "apps", "app", apps.APP, merge_repeated_keys=True)


_READ = "a read"
#: DESIGN.md principle 16: a write that changes the cluster is sent once; the caller decides
#: again from fresh data instead of the transport repeating it after it may have run.
_ONCE = "a write that changes the cluster is sent once"
_E = Endpoint
_c, _n, _a, _o, _t, _r, _l, _s = cluster, nodes, apps, app_ops, attempts, reservations, labels, scheduler
_EPS = [
    # cluster
    _E("cluster", "GET", ROOT, True, _c.decode_cluster_info, _c.encode_cluster_info, _READ),
    _E("cluster-info", "GET", ROOT + "/info", True, _c.decode_cluster_info, _c.encode_cluster_info, _READ),
    _E("cluster-user-info", "GET", ROOT + "/userinfo", True,
       _c.decode_cluster_user_info, _c.encode_cluster_user_info, _READ),
    _E("cluster-metrics", "GET", ROOT + "/metrics", True, _c.decode_cluster_metrics, _c.encode_cluster_metrics, _READ),
    _E("scheduler", "GET", ROOT + "/scheduler", True, _s.decode_scheduler, _s.encode_scheduler, _READ),
    _E("queue-access", "GET", ROOT + "/queues/{queue}/access", True,
       _s.decode_queue_access, _s.encode_queue_access, _READ),
    # nodes
    _E("nodes", "GET", ROOT + "/nodes", True, _n.decode_nodes, _n.encode_nodes, _READ, merge_repeated_keys=False,
       decode_body=_nodes_body),
    _E("node", "GET", ROOT + "/nodes/{node_id}", True, _n.decode_node, _n.encode_node, _READ,
       merge_repeated_keys=False),
    _E("node-resource", "POST", ROOT + "/nodes/{node_id}/resource", False,
       _n.decode_node_resource_info, _n.encode_node_resource_info,
       _ONCE + ": an absolute capacity, but a repeat re-arms the node's overCommitTimeout (a cut with "
       "T=0 kills again) and may land long after the data it was decided from"),
    # apps
    _E("apps", "GET", ROOT + "/apps", True, _a.decode_apps, _a.encode_apps, _READ, decode_body=_apps_body),
    _E("new-application", "POST", ROOT + "/apps/new-application", False,
       _o.decode_new_application, _o.encode_new_application, "each call allocates a new application id"),
    _E("submit-application", "POST", ROOT + "/apps", False, None, None,
       "a second submit of the same id is refused or starts a duplicate: look before re-trying", fixed_body=b""),
    _E("app", "GET", ROOT + "/apps/{app_id}", True, _a.decode_app, _a.encode_app, _READ),
    _E("app-attempts", "GET", ROOT + "/apps/{app_id}/appattempts", True,
       _t.decode_app_attempts, _t.encode_app_attempts, _READ),
    _E("app-attempt", "GET", ROOT + "/apps/{app_id}/appattempts/{attempt_id}", True,
       _t.decode_app_attempt, _t.encode_app_attempt, _READ),
    _E("containers", "GET", ROOT + "/apps/{app_id}/appattempts/{attempt_id}/containers", True,
       _t.decode_containers, _t.encode_containers, _READ),
    _E("container", "GET", ROOT + "/apps/{app_id}/appattempts/{attempt_id}/containers/{container_id}", True,
       _t.decode_container, _t.encode_container, _READ),
    _E("app-state", "GET", ROOT + "/apps/{app_id}/state", True, _o.decode_app_state, _o.encode_app_state, _READ),
    _E("app-state-put", "PUT", ROOT + "/apps/{app_id}/state", False, _o.decode_app_state, _o.encode_app_state,
       _ONCE + " (a repeated KILLED would answer 200 KILLED, capture apps-id-state-put-KILLED-again, but a "
       "kill is never repeated blindly)"),
    _E("app-queue", "GET", ROOT + "/apps/{app_id}/queue", True, _o.decode_app_queue, _o.encode_app_queue, _READ),
    _E("app-queue-put", "PUT", ROOT + "/apps/{app_id}/queue", False, _o.decode_app_queue, _o.encode_app_queue,
       _ONCE + " (a target queue)"),
    _E("app-priority", "GET", ROOT + "/apps/{app_id}/priority", True,
       _o.decode_app_priority, _o.encode_app_priority, _READ),
    _E("app-priority-put", "PUT", ROOT + "/apps/{app_id}/priority", False,
       _o.decode_app_priority, _o.encode_app_priority, _ONCE + " (a target priority)"),
    _E("app-timeouts", "GET", ROOT + "/apps/{app_id}/timeouts", True,
       _o.decode_app_timeouts, _o.encode_app_timeouts, _READ),
    _E("app-timeout", "GET", ROOT + "/apps/{app_id}/timeouts/{timeout_type}", True,
       _o.decode_app_timeout, _o.encode_app_timeout, _READ),
    _E("app-timeout-put", "PUT", ROOT + "/apps/{app_id}/timeout", False,
       _o.decode_app_timeout, _o.encode_app_timeout, _ONCE + " (a target expiry time)"),
    _E("app-statistics", "GET", ROOT + "/appstatistics", True,
       _o.decode_app_statistics, _o.encode_app_statistics, _READ),
    # containers
    _E("container-signal", "POST", ROOT + "/containers/{container_id}/signal/{command}", False, None, None,
       "a signal is an action, not a state: never sent twice blindly", fixed_body=b""),
    # reservations
    _E("reservation-new", "POST", ROOT + "/reservation/new-reservation", False,
       _r.decode_new_reservation, _r.encode_new_reservation, "each call allocates a new reservation id"),
    _E("reservation-submit", "POST", ROOT + "/reservation/submit", False, None, None,
       "admission is not repeated blindly (the plan may have changed in between)", fixed_body=b""),
    _E("reservation-update", "POST", ROOT + "/reservation/update", False, None, None,
       _ONCE + " (it replaces the whole definition: the next decision sends a fresh one)", fixed_body=b"{}"),
    _E("reservation-delete", "POST", ROOT + "/reservation/delete", False, None, None,
       "a repeat after success answers 400 'reservation ... is unknown' (RMWebServices.deleteReservation)",
       fixed_body=b"{}"),
    _E("reservation-list", "GET", ROOT + "/reservation/list", True,
       _r.decode_reservation_list, _r.encode_reservation_list, _READ),
    # node labels (read)
    _E("node-labels", "GET", ROOT + "/get-node-labels", True, _l.decode_node_labels, _l.encode_node_labels, _READ),
    _E("node-to-labels", "GET", ROOT + "/get-node-to-labels", True,
       _l.decode_node_to_labels, _l.encode_node_to_labels, _READ),
    _E("labels-to-nodes", "GET", ROOT + "/label-mappings", True,
       _l.decode_labels_to_nodes, _l.encode_labels_to_nodes, _READ),
    _E("node-labels-of-node", "GET", ROOT + "/nodes/{node_id}/get-labels", True,
       _l.decode_node_labels, _l.encode_node_labels, _READ),
]
ENDPOINTS: dict[str, Endpoint] = {e.name: e for e in _EPS}


def match(method: str, path: str) -> tuple[Endpoint, dict[str, str]] | None:
    """The endpoint for ``method path`` (query string ignored) and its path parameters."""
    bare = path.split("?", 1)[0]
    for ep in _EPS:
        if ep.method == method:
            m = ep.regex.fullmatch(bare)
            if m is not None:
                return ep, m.groupdict()
    return None


_BIG_BODY = 1 << 20


@contextmanager
def _gc_paused(size: int) -> Iterator[None]:
    """Pause the cyclic GC while a large body is parsed into millions of small objects:
    ``json.loads`` of a 10k-node answer triggers repeated full collections otherwise (about
    twice the time, bench/rm_client_decode.py). Nothing cyclic is created here."""
    if size < _BIG_BODY or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_HINTS: list[tuple[str, str, str]] = [
    ("app-queue-put", "UndeclaredThrowableException",
     "3.3.6 answers 500 for a move to a parent/reservable queue or after queues were refreshed; "
     "move between leaf queues (a short leaf name such as 'default' works)"),
    ("app-queue-put", "state cannot be moved", "only ACCEPTED or RUNNING apps can be moved"),
    ("app-priority-put", "PlanQueue",
     "the app's queue is reservable (a PlanQueue, e.g. root.default with reservations on): 3.3.6 cannot change "
     "the priority of any app submitted to it, in a reservation or not; submit to a non-reservable leaf queue "
     "to use priorities"),
    ("reservation-submit", "PlanningQuotaException",
     "the plan's capacity-over-time quota is used up: shrink or move the reservation"),
    ("reservation-submit", "is not managed by reservation system",
     "name a reservable queue (its full path, e.g. root.default)"),
    ("submit-application", "unknown queue", "queues refreshed with rmadmin break submission until an RM restart"),
]


def _hint(endpoint: str, exception: str | None, message: str) -> str | None:
    for name, needle, hint in _HINTS:
        if name == endpoint and (needle == exception or needle in message):
            return hint
    return None


def decode_answer(endpoint: Endpoint, status: int, body: bytes, *, method: str | None = None,
                  path: str | None = None, rm_url: str | None = None) -> Any:
    """Turn one RM answer into the endpoint's model, or raise the matching RMError.

    Status >= 300 -> :func:`~rm_client.errors.error_for_response` (both error body forms);
    endpoints without a decoder return None whatever the body; otherwise the body must be
    JSON of the endpoint's shape (:class:`RMDecodeError` with the call's context if not).
    """
    method = method or endpoint.method
    path = path or endpoint.template
    if status >= 300:
        err = error_for_response(method=method, path=path, status=status, body=body, rm_url=rm_url)
        err.hint = _hint(endpoint.name, err.remote_exception, err.remote_message or "")
        raise err
    if endpoint.decode is None:
        return None
    try:
        with _gc_paused(len(body)):
            if endpoint.decode_body is not None:
                fast = endpoint.decode_body(body)
                if fast is not FALLBACK:
                    return fast
            return endpoint.decode(loads(body, merge_repeated_keys=endpoint.merge_repeated_keys))
    except RMDecodeError as err:
        err.method, err.path, err.status, err.rm_url = method, path, status, rm_url
        if not err.snippet:
            err.snippet = body[:200].decode("utf-8", "replace")
        raise
