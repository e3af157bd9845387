"""The emulator's HTTP request and reply values (shared by the router and the handlers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from harvester.emulator import errors
from harvester.emulator.render_common import dumps


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


class RouteTable(Protocol):
    """What handler modules register their routes with (routes.Router)."""

    emu: Any

    def add(self, method: str, pattern: str, handler: Callable[[Request, dict[str, str]], Reply]) -> None: ...
