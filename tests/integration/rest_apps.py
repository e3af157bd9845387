"""Launch YARN applications over HTTP only (no Hadoop CLI, no jars): the AM container runs a
shell command, e.g. ``sleep 300``. For any integration suite that needs running apps.

How such an app behaves on 3.3.6 (captures apps-id-in-active-reservation,
apps-id-rest-app-final; ENDPOINTS.txt for the submission JSON):

* the AM never registers with the RM, so the app stays ACCEPTED while its AM container runs
  (the attempt gets its ``containerId`` once the container is allocated);
* when the command ends the attempt fails (even with exit code 0) and, with one attempt, the
  app is FAILED; a killed app is KILLED;
* inside a reservation, the queue must be the full path (``root.default``), and the
  reservation's window must already be open (else the app FAILS at once).

Usage::

    with sleep_app(client, seconds=300) as app_id:
        attempt_id, am_container = wait_for_am_container(client, app_id)
        ...
    # the app is killed on exit, whatever happened
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rm_client import AppSubmission, Resource, RMClient, RMError, RMNotFoundError

__all__ = ["kill_quietly", "sleep_app", "submit_sleep_app", "wait_for", "wait_for_am_container", "wait_for_state"]

T = TypeVar("T")


def submit_sleep_app(client: RMClient, *, seconds: int = 300, queue: str = "root.default",
                     name: str = "harvester-it-sleep", memory_mb: int = 512, vcores: int = 1,
                     tags: tuple[str, ...] = ("harvester-it",), reservation_id: str | None = None) -> str:
    """new-application + submit; returns the application id. The AM's stdout/stderr go to the
    container log dir as YARN expects."""
    new = client.new_application()
    client.submit_application(AppSubmission(
        application_id=new.application_id,
        application_name=name,
        queue=queue,
        command=f"sleep {int(seconds)} 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr",
        resource=Resource(memory_mb, vcores),
        tags=tags,
        reservation_id=reservation_id,
        max_app_attempts=1,
    ))
    return new.application_id


def kill_quietly(client: RMClient, app_id: str) -> None:
    """Kill unless already finished; never raises (for finalizers)."""
    try:
        if client.get_app_state(app_id) not in ("FINISHED", "FAILED", "KILLED"):
            client.kill_app(app_id)
    except RMError:
        pass


@contextmanager
def sleep_app(client: RMClient, **kwargs: object) -> Iterator[str]:
    """A submitted sleep app, killed when the block exits."""
    app_id = submit_sleep_app(client, **kwargs)  # type: ignore[arg-type]
    try:
        yield app_id
    finally:
        kill_quietly(client, app_id)


def wait_for(probe: Callable[[], T | None], *, timeout_s: float, what: str, interval_s: float = 0.5) -> T:
    """Poll ``probe`` until it returns something truthy; AssertionError naming ``what`` after
    ``timeout_s`` (RMNotFoundError counts as "not yet")."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while True:
        try:
            value = probe()
        except RMNotFoundError as err:
            value, last = None, err
        if value:
            return value
        if value is not None:
            last = value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what} (last: {last!r})")
        time.sleep(interval_s)


def wait_for_state(client: RMClient, app_id: str, states: tuple[str, ...], timeout_s: float = 60) -> str:
    def probe() -> str | None:
        state = client.get_app_state(app_id)
        return state if state in states else None

    return wait_for(probe, timeout_s=timeout_s, what=f"{app_id} to reach {'/'.join(states)}")


def wait_for_am_container(client: RMClient, app_id: str, timeout_s: float = 90) -> tuple[str, str]:
    """(attempt id, AM container id) once the AM container is allocated."""
    def probe() -> tuple[str, str] | None:
        attempts = client.list_app_attempts(app_id)
        if attempts and attempts[-1].am_container_id:
            return attempts[-1].attempt_id, attempts[-1].am_container_id
        return None

    return wait_for(probe, timeout_s=timeout_s, what=f"the AM container of {app_id}")
