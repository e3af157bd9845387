"""The typed YARN ResourceManager REST client (Hadoop 3.3.6).

Every method validates its arguments first (ids by format, writes in full: see
:mod:`rm_client.validation`) and raises :class:`~rm_client.errors.RMValidationError` without
sending anything when they are wrong. Then one logical call goes through
:class:`~rm_client.transport.Transport` (timeouts, HA failover, retries only where the
endpoint table says the call is idempotent) and :func:`~rm_client.endpoints.decode_answer`
(models or the exception tree). Nothing but :class:`~rm_client.errors.RMError` escapes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import requests

from rm_client.config import RMClientConfig
from rm_client.endpoints import ENDPOINTS, decode_answer
from rm_client.errors import Problem, RMDecodeError, RMError, RMStandbyError, RMValidationError
from rm_client.ids import check_app_attempt_id, check_app_id, check_container_id, check_node_id, check_reservation_id
from rm_client.query import AppQuery
from rm_client.transport import Answer, Transport
from rm_client.validation import (
    check_app_submission,
    check_node_resource_update,
    check_priority,
    check_queue,
    check_reservation_definition,
    check_reservation_submit,
    check_signal,
)
from rm_client.wire import app_ops, bodies, cluster, reservations
from rm_client.wire._json import dumps, loads
from rm_client.wire.apps import App, AppTimeout
from rm_client.wire.attempts import AppAttempt, AppAttemptDetail, Container
from rm_client.wire.labels import NodeLabel
from rm_client.wire.nodes import Node
from rm_client.wire.reservations import ReservationDefinition, ReservationInfo
from rm_client.wire.resources import Resource
from rm_client.wire.scheduler import QueueAccess, SchedulerInfo

__all__ = ["NODE_STATES", "RMClient"]

NODE_STATES = ("NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONED", "LOST", "REBOOTED", "DECOMMISSIONING", "SHUTDOWN")


def _opt(p: Problem | None) -> list[Problem]:
    return [p] if p is not None else []


def _is_standby_info(answer: Answer) -> bool:
    """``/info`` is answered by a standby itself (not redirected): look at ``haState``."""
    if answer.status != 200:
        return False
    try:
        return cluster.decode_cluster_info(loads(answer.body)).ha_state == "STANDBY"
    except RMError:
        return False


class RMClient:
    """A client for one YARN cluster (one RM or an HA pair, ``config.urls``).

    ``session``: the ``requests.Session`` to use (the test seam; default: a new one).
    ``sleep``/``rng``: backoff waiting and jitter source, injected for instant tests.
    Thread-safe for concurrent calls if the session is.
    """

    def __init__(self, config: RMClientConfig, session: requests.Session | None = None, *,
                 sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None) -> None:
        self.config = config
        self.transport = Transport(config, session, sleep=sleep, rng=rng)

    @property
    def active_url(self) -> str:
        return self.transport.active_url

    def close(self) -> None:
        self.transport.close()

    def deadline(self, seconds: float) -> AbstractContextManager[None]:
        """``with client.deadline(s): ...``: every call of this thread in the block, retries and
        back-off included, ends within ``s`` seconds (Transport.deadline)."""
        return self.transport.deadline(seconds)

    def __enter__(self) -> RMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing

    def _refuse(self, name: str, problems: list[Problem]) -> None:
        if problems:
            ep = ENDPOINTS[name]
            raise RMValidationError(problems, method=ep.method, path=ep.template)

    def _call(self, name: str, path_params: Mapping[str, str] | None = None, *,
              params: Mapping[str, Any] | None = None, body: Any = None,
              reject: Callable[[Answer], bool] | None = None, only_url: str | None = None) -> Any:
        ep = ENDPOINTS[name]
        path = ep.path(**(path_params or {}))
        payload = dumps(body) if body is not None else None
        answer = self.transport.send(
            ep.method, path, idempotent=ep.idempotent, params=params, body=payload,
            content_type="application/json" if payload is not None else None, reject=reject, only_url=only_url,
        )
        return decode_answer(ep, answer.status, answer.body, method=ep.method, path=path, rm_url=answer.rm_url)

    # --- cluster

    def get_cluster_info(self) -> cluster.ClusterInfo:
        """``/info``. With several URLs, a STANDBY answer moves on to the next URL; if no RM is
        active, the last standby's info is returned (it is a true answer: ``ha_state``)."""
        reject = _is_standby_info if len(self.config.urls) > 1 else None
        try:
            info: cluster.ClusterInfo = self._call("cluster-info", reject=reject)
            return info
        except RMStandbyError as err:
            try:
                return cluster.decode_cluster_info(loads(err.body))
            except RMDecodeError:
                raise err from None

    def probe_ha(self) -> dict[str, cluster.ClusterInfo | RMError]:
        """``/info`` of every configured URL, without failover or retries (for operators)."""
        out: dict[str, cluster.ClusterInfo | RMError] = {}
        for url in self.config.urls:
            try:
                out[url] = self._call("cluster-info", only_url=url)
            except RMError as err:
                out[url] = err
        return out

    def get_cluster_user_info(self) -> cluster.ClusterUserInfo:
        result: cluster.ClusterUserInfo = self._call("cluster-user-info")
        return result

    def get_cluster_metrics(self) -> cluster.ClusterMetrics:
        result: cluster.ClusterMetrics = self._call("cluster-metrics")
        return result

    def get_scheduler(self) -> SchedulerInfo:
        result: SchedulerInfo = self._call("scheduler")
        return result

    def check_queue_access(self, queue: str, user: str, acl_type: str = "SUBMIT_APPLICATIONS") -> QueueAccess:
        """Whether ``user`` may ``acl_type`` (SUBMIT_APPLICATIONS | ADMINISTER_QUEUE) on ``queue``."""
        problems = check_queue(queue)
        if not isinstance(user, str) or not user.strip():
            problems.append(Problem("user", "must be a non-empty user name"))
        if acl_type not in ("SUBMIT_APPLICATIONS", "ADMINISTER_QUEUE"):
            problems.append(Problem("acl_type", f"{acl_type!r} is not SUBMIT_APPLICATIONS or ADMINISTER_QUEUE"))
        self._refuse("queue-access", problems)
        result: QueueAccess = self._call("queue-access", {"queue": queue},
                                         params={"user": user, "queue-acl-type": acl_type})
        return result

    # --- nodes

    def list_nodes(self, states: Iterable[str] = ()) -> tuple[Node, ...]:
        """Nodes in ``states`` (default: every state, as 3.3.6 answers without the parameter;
        inactive nodes carry an empty ``http_address``)."""
        wanted = tuple(states)
        problems = [Problem(f"states[{i}]", f"{s!r} is not one of {', '.join(NODE_STATES)}")
                    for i, s in enumerate(wanted) if s not in NODE_STATES]
        self._refuse("nodes", problems)
        result: tuple[Node, ...] = self._call("nodes", params={"states": ",".join(wanted)} if wanted else None)
        return result

    def get_node(self, node_id: str) -> Node:
        self._refuse("node", _opt(check_node_id(node_id)))
        result: Node = self._call("node", {"node_id": node_id})
        return result

    def update_node_resource(self, node_id: str, resource: Resource, overcommit_timeout_ms: int = -1, *,
                             allow_zero: bool = False) -> Resource:
        """Set the node's YARN capacity (``POST /nodes/{id}/resource``).

        ``overcommit_timeout_ms`` is MILLISECONDS: -1 (default) never kills, the node runs
        over-committed; T >= 0 makes the RM kill the youngest non-AM containers, just enough
        to fit, once T has passed. Zero memory/vcores needs ``allow_zero=True``. The answer
        often still shows the OLD capacity: poll :meth:`get_node` for the effect."""
        self._refuse("node-resource", check_node_resource_update(node_id, resource, overcommit_timeout_ms,
                                                                 allow_zero=allow_zero))
        body = bodies.encode_node_resource_option(resource, overcommit_timeout_ms)
        result: Resource = self._call("node-resource", {"node_id": node_id}, body=body)
        return result

    # --- apps

    def list_apps(self, query: AppQuery | None = None, **filters: Any) -> tuple[App, ...]:
        """Apps matching ``query`` (or the same filters as keywords, see :class:`AppQuery`)."""
        q = query if query is not None else AppQuery(**filters)
        self._refuse("apps", q.problems())
        result: tuple[App, ...] = self._call("apps", params=q.to_params())
        return result

    def get_app(self, app_id: str, deselects: Iterable[str] = ()) -> App:
        q = AppQuery(deselects=tuple(deselects))
        self._refuse("app", _opt(check_app_id(app_id)) + q.problems())
        result: App = self._call("app", {"app_id": app_id}, params=q.to_params() or None)
        return result

    def list_app_attempts(self, app_id: str) -> tuple[AppAttempt, ...]:
        self._refuse("app-attempts", _opt(check_app_id(app_id)))
        result: tuple[AppAttempt, ...] = self._call("app-attempts", {"app_id": app_id})
        return result

    def get_app_attempt(self, app_id: str, attempt_id: str) -> AppAttemptDetail:
        self._refuse("app-attempt", _opt(check_app_id(app_id)) + _opt(check_app_attempt_id(attempt_id)))
        result: AppAttemptDetail = self._call("app-attempt", {"app_id": app_id, "attempt_id": attempt_id})
        return result

    def list_containers(self, app_id: str, attempt_id: str) -> tuple[Container, ...]:
        self._refuse("containers", _opt(check_app_id(app_id)) + _opt(check_app_attempt_id(attempt_id)))
        result: tuple[Container, ...] = self._call("containers", {"app_id": app_id, "attempt_id": attempt_id})
        return result

    def get_container(self, app_id: str, attempt_id: str, container_id: str) -> Container:
        self._refuse("container", _opt(check_app_id(app_id)) + _opt(check_app_attempt_id(attempt_id))
                     + _opt(check_container_id(container_id)))
        result: Container = self._call("container", {"app_id": app_id, "attempt_id": attempt_id,
                                                     "container_id": container_id})
        return result

    def get_app_state(self, app_id: str) -> str:
        self._refuse("app-state", _opt(check_app_id(app_id)))
        result: str = self._call("app-state", {"app_id": app_id})
        return result

    def kill_app(self, app_id: str) -> str:
        """``PUT /apps/{id}/state {"state":"KILLED"}``: 202 while killing, 200 once killed.
        Returns the echoed state, which is unreliable (``RUNNING`` was recorded): poll
        :meth:`get_app_state` to see KILLED."""
        self._refuse("app-state-put", _opt(check_app_id(app_id)))
        result: str = self._call("app-state-put", {"app_id": app_id}, body=app_ops.encode_app_state("KILLED"))
        return result

    def get_app_queue(self, app_id: str) -> str:
        self._refuse("app-queue", _opt(check_app_id(app_id)))
        result: str = self._call("app-queue", {"app_id": app_id})
        return result

    def move_app(self, app_id: str, queue: str) -> str:
        """Move an ACCEPTED/RUNNING app to another LEAF queue (containers are kept); returns the
        echoed name. The RM answers 200 without moving when ``queue`` equals the app's current
        queue name; 400 (plain text) for an app in another state; 403 (plain text) without the
        ACL; 500 UndeclaredThrowableException for other scheduler refusals (recorded for
        ``root.default``/``root.default-default`` after a queue refresh; the short leaf name
        ``default`` worked). RMWebServices.updateAppQueue/moveApp, 3.3.6."""
        self._refuse("app-queue-put", _opt(check_app_id(app_id)) + check_queue(queue))
        result: str = self._call("app-queue-put", {"app_id": app_id}, body=app_ops.encode_app_queue(queue))
        return result

    def get_app_priority(self, app_id: str) -> int:
        self._refuse("app-priority", _opt(check_app_id(app_id)))
        result: int = self._call("app-priority", {"app_id": app_id})
        return result

    def set_app_priority(self, app_id: str, priority: int) -> int:
        """Returns the priority the RM applied (clamped to the cluster maximum, 0 by default;
        negative values are accepted). Fails with 500 for apps inside a reservation."""
        self._refuse("app-priority-put", _opt(check_app_id(app_id)) + check_priority(priority))
        result: int = self._call("app-priority-put", {"app_id": app_id},
                                 body=app_ops.encode_app_priority(priority))
        return result

    def get_app_timeouts(self, app_id: str) -> tuple[AppTimeout, ...]:
        self._refuse("app-timeouts", _opt(check_app_id(app_id)))
        result: tuple[AppTimeout, ...] = self._call("app-timeouts", {"app_id": app_id})
        return result

    def get_app_statistics(self, states: Iterable[str] = (), application_types: Iterable[str] = ()
                           ) -> tuple[app_ops.AppStatItem, ...]:
        q = AppQuery(states=tuple(states), application_types=tuple(application_types))
        self._refuse("app-statistics", q.problems())
        params = {k: v for k, v in q.to_params().items() if k in ("states", "applicationTypes")}
        result: tuple[app_ops.AppStatItem, ...] = self._call("app-statistics", params=params or None)
        return result

    def new_application(self) -> app_ops.NewApplication:
        """A fresh application id (never retried once sent: each call allocates one)."""
        result: app_ops.NewApplication = self._call("new-application")
        return result

    def submit_application(self, submission: bodies.AppSubmission) -> None:
        """``POST /apps`` (202, empty body). Never repeated after it may have been sent."""
        self._refuse("submit-application", check_app_submission(submission))
        self._call("submit-application", body=bodies.encode_app_submission(submission))

    # --- containers

    def signal_container(self, container_id: str, command: str) -> None:
        """OUTPUT_THREAD_DUMP | GRACEFUL_SHUTDOWN (SIGTERM) | FORCEFUL_SHUTDOWN (SIGKILL); 200
        with an empty body. Never repeated after it may have been sent."""
        self._refuse("container-signal", check_signal(container_id, command))
        self._call("container-signal", {"container_id": container_id, "command": str(command)})

    # --- reservations

    def new_reservation(self) -> str:
        result: str = self._call("reservation-new")
        return result

    def submit_reservation(self, reservation_id: str, queue: str, definition: ReservationDefinition) -> None:
        """Ask the plan of ``queue`` (a reservable queue; prefer its full path) for
        ``definition``. 202 with an empty body; list the reservation to see what was planned."""
        self._refuse("reservation-submit", check_reservation_submit(reservation_id, queue, definition))
        body = {
            "queue": queue,
            "reservation-id": reservation_id,
            "reservation-definition": reservations.encode_definition_request(definition),
        }
        self._call("reservation-submit", body=body)

    def update_reservation(self, reservation_id: str, definition: ReservationDefinition) -> None:
        self._refuse("reservation-update", _opt(check_reservation_id(reservation_id))
                     + check_reservation_definition(definition))
        body = {"reservation-id": reservation_id,
                "reservation-definition": reservations.encode_definition_request(definition)}
        self._call("reservation-update", body=body)

    def delete_reservation(self, reservation_id: str) -> None:
        """Its apps move to the plan's default queue (``root.default-default``) and keep running.
        An unknown well-formed id answers 400 ("... is unknown"), a malformed one 404."""
        self._refuse("reservation-delete", _opt(check_reservation_id(reservation_id)))
        self._call("reservation-delete", body={"reservation-id": reservation_id})

    def list_reservations(self, queue: str | None = None, reservation_id: str | None = None, *,
                          start_time_ms: int | None = None, end_time_ms: int | None = None,
                          include_resource_allocations: bool = True) -> tuple[ReservationInfo, ...]:
        """Reservations of ``queue`` (RM default: ``default``). An unknown well-formed id gives
        an empty tuple; a malformed id 404 (RMNotFoundError)."""
        problems = check_queue(queue) if queue is not None else []
        if reservation_id is not None:
            problems += _opt(check_reservation_id(reservation_id))
        for name, v in (("start_time_ms", start_time_ms), ("end_time_ms", end_time_ms)):
            if v is not None and (type(v) is not int or v < -1):
                problems.append(Problem(name, f"must be epoch milliseconds (or -1), got {v!r}"))
        self._refuse("reservation-list", problems)
        params: dict[str, Any] = {"include-resource-allocations": "true" if include_resource_allocations else "false"}
        for key, v in (("queue", queue), ("reservation-id", reservation_id), ("start-time", start_time_ms),
                       ("end-time", end_time_ms)):
            if v is not None:
                params[key] = str(v)
        result: tuple[ReservationInfo, ...] = self._call("reservation-list", params=params)
        return result

    # --- node labels (read only)

    def get_node_labels(self) -> tuple[NodeLabel, ...]:
        result: tuple[NodeLabel, ...] = self._call("node-labels")
        return result

    def get_node_to_labels(self) -> dict[str, tuple[str, ...]]:
        result: dict[str, tuple[str, ...]] = self._call("node-to-labels")
        return result

    def get_labels_to_nodes(self, labels: Iterable[str] = ()) -> dict[str, tuple[str, ...]]:
        wanted = tuple(labels)
        problems = [Problem(f"labels[{i}]", "must be a non-empty string without ','")
                    for i, lb in enumerate(wanted) if not isinstance(lb, str) or not lb or "," in lb]
        self._refuse("labels-to-nodes", problems)
        result: dict[str, tuple[str, ...]] = self._call("labels-to-nodes",
                                                        params={"labels": ",".join(wanted)} if wanted else None)
        return result

    def get_labels_on_node(self, node_id: str) -> tuple[NodeLabel, ...]:
        self._refuse("node-labels-of-node", _opt(check_node_id(node_id)))
        result: tuple[NodeLabel, ...] = self._call("node-labels-of-node", {"node_id": node_id})
        return result
