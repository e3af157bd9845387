"""One long-poll protocol for the advice documents the Java plug-ins cache (JSON, ETag, wait).

    GET <path>?wait=30
    If-None-Match: "41"

- 200 + the document and `ETag: "<version>"` when the current version differs from
  If-None-Match (or there is none) — at once, or as soon as a new version is published while
  waiting;
- 304 Not Modified (empty body, same ETag) when If-None-Match names the current version and
  no new version came within `wait` seconds (0 = answer at once; capped at `max_wait_s`);
- 503 with a JSON error and `Retry-After` while no document exists yet (after waiting `wait`
  seconds for the first one);
- 400 for a `wait` that is not a number >= 0;
- 503 with `Retry-After` when `max_waiters` requests already wait (server.admin_http.max_long_polls).
If-None-Match accepts `"41"`, `W/"41"`, a bare `41`, a comma-separated list, or `*` (any
document matches). `Cache-Control: no-cache` keeps proxies from answering for us.
Used by GET /v1/hdfs/placement-table (hdfs_http.py) and GET /v1/yarn/node-ordering
(node_ordering_http.py); the client side is deploy/shim/common/.../AdviceClient.java.
The handler is a coroutine: a waiting request is a parked future on the admin server's event
loop (advice/async_wait.py), not a thread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from harvester.advice.admin_http import Request, Response
from harvester.advice.async_wait import AsyncItemWaiter
from harvester.board import Board as StateBoard, Item

RETRY_AFTER_S = 5


class Document(Protocol):
    @property
    def version(self) -> int: ...

    @property
    def body(self) -> bytes: ...


class Board(Protocol):
    """What a long-poll reads: one item of a state board holding versioned documents
    (board/change_board.ChangeBoard)."""

    board: StateBoard
    item: Item[Any]

    def current(self) -> Any: ...


class WaitSlots:
    """A cap on requests held open at once, shared by every long-poll route of one server
    (touched only on the server's event loop)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0


def etag(version: int) -> str:
    return f'"{version}"'


def matches(if_none_match: str | None, version: int) -> bool:
    if if_none_match is None:
        return False
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag.strip('"') == str(version):
            return True
    return False


def _document(doc: Document) -> Response:
    return Response(200, doc.body, "application/json", {"ETag": etag(doc.version), "Cache-Control": "no-cache"})


def long_poll_route(
    board: Board,
    *,
    max_wait_s: float,
    not_ready: dict[str, Any],
    waiters: Callable[[int], None] = lambda delta: None,
    slots: WaitSlots | None = None,
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of the module docstring; `not_ready` is the 503 body, `waiters(±1)` counts
    requests held open (a gauge), `slots` caps them."""
    waiter: AsyncItemWaiter[Any] = AsyncItemWaiter(board.board, board.item)

    async def handle(req: Request) -> Response:
        raw = (req.query.get("wait") or ["0"])[-1]
        try:
            wait = float(raw)
        except ValueError:
            wait = math.nan
        if not wait >= 0:  # NaN and negatives; +inf is capped below
            return Response.json(400, {"error": f"wait={raw!r}: expected seconds >= 0 (at most {max_wait_s:g} are used)"})
        wait = min(wait, max_wait_s)
        inm = req.header("If-None-Match")
        doc = board.current()
        if doc is not None and not matches(inm, doc.version):
            return _document(doc)
        held = doc.version if doc is not None else None
        if wait > 0:
            if slots is not None and slots.held >= slots.limit:
                return Response.json(503, {"error": f"too many long-polls waiting ({slots.limit}); retry later"},
                                     {"Retry-After": "1", "Cache-Control": "no-cache"})
            waiters(1)
            if slots is not None:
                slots.held += 1
            try:
                doc = await waiter.wait(lambda cur: cur is not None and cur.version != held, wait)
            finally:
                waiters(-1)
                if slots is not None:
                    slots.held -= 1
        if doc is None:
            return Response(503, (json.dumps(not_ready) + "\n").encode(), "application/json",
                            {"Retry-After": str(RETRY_AFTER_S), "Cache-Control": "no-cache"})
        if doc.version == held:
            return Response(304, b"", "application/json", {"ETag": etag(doc.version), "Cache-Control": "no-cache"})
        return _document(doc)

    return handle
