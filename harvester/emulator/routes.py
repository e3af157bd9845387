"""URL routing of the emulated RM: every RMWebServices path of ENDPOINTS.txt we serve.

`Router.handle(request)` is called with the emulator caught up to its clock and its lock
held; it returns a `Reply` or raises `RestError`. A known path with the wrong method answers
500 WebApplicationException (the RM does not send 405). NodeManager endpoints are served under
`/nm/{nodeId}/ws/v1/node/...` (an emulator extension: real NMs have their own ports).
"""

from __future__ import annotations

import re
from typing import Callable
from urllib.parse import unquote

from harvester.emulator import errors, handlers_apps, handlers_cluster
from harvester.emulator.errors import RestError
from harvester.emulator.messages import Reply, Request
from harvester.emulator.state import Emulator

Handler = Callable[[Request, dict[str, str]], Reply]


class Router:
    """(method, compiled pattern) -> handler; patterns are matched in registration order."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self._routes: list[tuple[re.Pattern[str], dict[str, Handler]]] = []
        handlers_cluster.register(self)
        handlers_apps.register(self)

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        regex = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "/?$")
        for rx, methods in self._routes:
            if rx.pattern == regex.pattern:
                methods[method] = handler
                return
        self._routes.append((regex, {method: handler}))

    def handle(self, req: Request) -> Reply:
        for rx, methods in self._routes:
            m = rx.match(req.path)
            if m is None:
                continue
            handler = methods.get(req.method)
            if handler is None:
                raise errors.method_not_allowed()
            return handler(req, {k: unquote(v) for k, v in m.groupdict().items()})
        raise errors.unknown_path(req.path)


__all__ = ["Reply", "Request", "RestError", "Router"]
