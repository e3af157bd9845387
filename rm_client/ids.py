"""YARN identifier formats, checked before an id is put into a URL or a body.

The formats are those of Hadoop 3.3.6's ``ApplicationId``, ``ApplicationAttemptId``,
``ContainerId``, ``NodeId`` and ``ReservationId`` ``fromString`` parsers (the RM rejects the
rest with 400/404/500, see captures ``err-apps-id-state-put-bad-appid``,
``err-container-signal-bad-containerid``, ``err-nodes-id-resource-malformed-nodeid``,
``err-reservation-submit-bad-reservation-id``). Checking locally keeps a typo from reaching a
write endpoint, and keeps path segments free of ``/``, ``?`` or ``#``.
"""

from __future__ import annotations

import re

from rm_client.errors import Problem

__all__ = [
    "APP_ATTEMPT_ID_RE",
    "APP_ID_RE",
    "CONTAINER_ID_RE",
    "NODE_ID_RE",
    "RESERVATION_ID_RE",
    "app_id_of",
    "attempt_id_of_container",
    "check_app_attempt_id",
    "check_app_id",
    "check_container_id",
    "check_node_id",
    "check_reservation_id",
]

# application_<cluster timestamp>_<sequence>  (sequence printed with at least 4 digits)
APP_ID_RE = re.compile(r"application_(\d+)_(\d+)")
# appattempt_<cluster timestamp>_<app sequence>_<attempt>  (attempt printed with 6 digits)
APP_ATTEMPT_ID_RE = re.compile(r"appattempt_(\d+)_(\d+)_(\d+)")
# container_[e<epoch>_]<cluster timestamp>_<app sequence>_<attempt>_<container sequence>
CONTAINER_ID_RE = re.compile(r"container_(?:e\d+_)?(\d+)_(\d+)_(\d+)_(\d+)")
# host:port; the host part may not contain separators that would change the URL path
NODE_ID_RE = re.compile(r"([A-Za-z0-9._\-\[\]:]+):(\d{1,5})")
# reservation_<cluster timestamp>_<sequence>
RESERVATION_ID_RE = re.compile(r"reservation_(\d+)_(\d+)")


def _check(regex: re.Pattern[str], value: object, field: str, example: str) -> Problem | None:
    if not isinstance(value, str):
        return Problem(field, f"must be a string like {example!r}, got {type(value).__name__}")
    if regex.fullmatch(value) is None:
        return Problem(field, f"{value!r} is not a valid id; expected the form {example!r}")
    return None


def check_app_id(value: object, field: str = "app_id") -> Problem | None:
    return _check(APP_ID_RE, value, field, "application_1795420810582_0002")


def check_app_attempt_id(value: object, field: str = "attempt_id") -> Problem | None:
    return _check(APP_ATTEMPT_ID_RE, value, field, "appattempt_1795420810582_0002_000001")


def check_container_id(value: object, field: str = "container_id") -> Problem | None:
    return _check(CONTAINER_ID_RE, value, field, "container_1795420810582_0002_01_000002")


def check_reservation_id(value: object, field: str = "reservation_id") -> Problem | None:
    return _check(RESERVATION_ID_RE, value, field, "reservation_1795420810582_0001")


def check_node_id(value: object, field: str = "node_id") -> Problem | None:
    problem = _check(NODE_ID_RE, value, field, "localhost:45454")
    if problem is None:
        assert isinstance(value, str)
        port = int(value.rsplit(":", 1)[1])
        if not 0 < port <= 65535:
            return Problem(field, f"{value!r}: port {port} is outside 1..65535")
    return problem


def app_id_of(attempt_or_container_id: str) -> str:
    """The application id an attempt or container id belongs to.

    >>> app_id_of("container_1795420810582_0002_01_000004")
    'application_1795420810582_0002'
    """
    m = APP_ATTEMPT_ID_RE.fullmatch(attempt_or_container_id) or CONTAINER_ID_RE.fullmatch(
        attempt_or_container_id
    )
    if m is None:
        raise ValueError(f"{attempt_or_container_id!r} is neither an attempt nor a container id")
    ts, seq = m.group(1), int(m.group(2))
    return f"application_{ts}_{seq:04d}"


def attempt_id_of_container(container_id: str) -> str:
    """The attempt id of a container id (``container_..._01_000004`` -> ``appattempt_..._000001``)."""
    m = CONTAINER_ID_RE.fullmatch(container_id)
    if m is None:
        raise ValueError(f"{container_id!r} is not a container id")
    ts, seq, attempt = m.group(1), int(m.group(2)), int(m.group(3))
    return f"appattempt_{ts}_{seq:04d}_{attempt:06d}"
