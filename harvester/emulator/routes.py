"""URL routing of the emulated RM: every RMWebServices path of ENDPOINTS.txt we serve.

`Router.handle(request)` is called with the emulator caught up to its clock and its lock
held; it returns a `Reply` or raises `RestError`. A known path with the wrong method answers
500 WebApplicationException (the RM does not send 405). NodeManager endpoints are served under
`/nm/{nodeId}/ws/v1/node/...` (an emulator extension: real NMs have their own ports).
"""

from __future__ import annotations

import re
from urllib.parse import unquote
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from harvester.emulator import errors
from harvester.emulator.errors import RestError
from harvester.emulator.jsonfmt import dumps
from harvester.emulator.state import Emulator

Handler = Callable[["Request", dict[str, str]], "Reply"]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes = b""

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def params(self, name: str) -> list[str]:
        """A multi-valued parameter, repeated or comma separated."""
        return [v for raw in self.query.get(name, []) for v in raw.split(",") if v]

    @property
    def user(self) -> str | None:
        return self.param("user.name")

    @property
    def content_type(self) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == "content-type"), "")

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), "")


@dataclass
class Reply:
    status: int
    body: str = ""
    content_type: str = errors.JSON_TYPE
    headers: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def json(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return Reply(status, dumps(doc), errors.JSON_TYPE, headers or {})

    @staticmethod
    def raw_json(text: str, status: int = 200) -> Reply:
        return Reply(status, text, errors.JSON_TYPE)


class Router:
    """(method, compiled pattern) -> handler; patterns are matched in registration order."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self._routes: list[tuple[re.Pattern[str], dict[str, Handler]]] = []
        from harvester.emulator import handlers_apps, handlers_cluster

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
