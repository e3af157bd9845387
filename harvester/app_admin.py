"""The admin half of the composition root (harvester/app.py wires it): the admin HTTP server
built from `server:` settings, the refit gate, and readiness by dependency.

- `admin_server(settings, metrics, token)`: limits (`server.admin_http`), bearer-token writes
  and open reads (`server.auth`), TLS (`server.tls`); advice/admin_http.py does the serving;
- `estimator_server(settings, store, metrics, token, now)`: the Resource Estimator API
  (advice/estimator_service.py) on its own server at `estimator.listen`, with the same limits,
  token and TLS; reads open, writes open only with `estimator.open_writes` (`harvester serve`
  with `estimator.enabled`, and `harvester estimator serve`);
- `RefitGate`: POST /v1/harvesting/refit refits at most once per `harvesting.refit_min_interval_s`
  (wall-clock seconds: a network rate limit) and one at a time; a refit took ~0.3 s of CPU
  each, 60 posts took the model version from 5 to 85;
- `readiness(loops, now)`: /readyz's document — ready or not, one line per problem, and per
  dependency (`rm`, `namenode`, `store`) whether it works and its last error, redacted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rm_client.redact import redact_text

from harvester.advice.admin_http import AdminAuth, AdminServer, HttpLimits
from harvester.advice.estimator_service import PREFIX as ESTIMATOR_PREFIX, EstimatorService
from harvester.advice.tls import server_ssl_context
from harvester.config import Settings
from harvester.history.store import HistoryStore
from harvester.loop.runner import ControlLoop
from harvester.observability.metrics import Metrics

DEPENDENCIES = ("rm", "namenode", "store")
ESTIMATOR_ROUTE = ESTIMATOR_PREFIX + "*"


def _limits(settings: Settings) -> HttpLimits:
    a = settings.server.admin_http
    return HttpLimits(max_connections=a.max_connections, max_body_bytes=a.max_body_bytes,
                      max_header_bytes=a.max_header_bytes, max_headers=a.max_headers, idle_timeout_s=a.idle_timeout_s,
                      body_timeout_s=a.body_timeout_s, handler_threads=a.handler_threads)


def admin_server(settings: Settings, metrics: Metrics, token: str | None) -> AdminServer:
    s = settings.server
    return AdminServer(s.admin_listen, limits=_limits(settings), auth=AdminAuth(token, tuple(s.auth.public_reads)),
                       ssl_context=server_ssl_context(s.tls), metrics=metrics)


def estimator_server(settings: Settings, store: HistoryStore, metrics: Metrics, token: str | None,
                     now: Callable[[], float]) -> AdminServer:
    e = settings.estimator
    auth = AdminAuth(token, ("*",), ("*",) if e.open_writes else ())
    server = AdminServer(e.listen, limits=_limits(settings), auth=auth, ssl_context=server_ssl_context(settings.server.tls),
                         metrics=metrics)
    server.route(ESTIMATOR_ROUTE, EstimatorService(e, store, now).handle, methods=("GET", "POST", "DELETE"))
    return server


class RefitGate:
    """At most one requested refit per `min_interval_s`, one at a time (module docstring)."""

    def __init__(self, min_interval_s: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.min_interval_s = min_interval_s
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._last: float | None = None

    def admit(self) -> float | None:
        """None when a refit may run now (and it is recorded), else the seconds to wait."""
        with self._lock:
            now = self._monotonic()
            if self._last is not None and now - self._last < self.min_interval_s:
                return self.min_interval_s - (now - self._last)
            self._last = now
            return None


def readiness(loops: Sequence[ControlLoop], now: float) -> dict[str, Any]:
    """/readyz: `ready`, `problems` (one line each) and `dependencies` (module docstring)."""
    problems = [why for ok, why in (loop.healthy(now) for loop in loops) if not ok]
    deps: dict[str, dict[str, Any]] = {}
    for loop in loops:
        st = loop.status()
        dep = st["last_dependency"]
        if dep is not None and st["consecutive_failures"]:
            deps[dep] = {"ok": False, "loop": loop.name, "failures": st["consecutive_failures"],
                         "failing_since": st["failing_since"], "last_error": redact_text(st["last_error"] or "")}
    for dep in DEPENDENCIES:
        deps.setdefault(dep, {"ok": True})
    failing = sorted(d for d, v in deps.items() if not v["ok"])
    return {"ready": not problems, "failing": failing, "problems": [redact_text(p) for p in problems],
            "dependencies": deps}
