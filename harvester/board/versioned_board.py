"""A published advice document with a version that changes only when its content does.

The node-ordering loop (writer) publishes every guard period; readers — the HTTP long-poll
(advice/long_poll.py) and gRPC GetNodeOrdering — get an immutable `Versioned` snapshot. A
publish whose `content` equals the current one keeps the version (no long-poll is woken for
nothing; the plug-ins' copies stay confirmed by 304s). The first version is the publisher's
`first_version` (the time of the first publish in ms), so versions keep increasing across
sidecar restarts. Waiting and closing: board/change_board.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from harvester.board.change_board import ChangeBoard

T = TypeVar("T")


@dataclass(frozen=True)
class Versioned(Generic[T]):
    version: int
    value: T
    body: bytes
    content: Any


class VersionedBoard(ChangeBoard["Versioned[T]"], Generic[T]):
    """The current document of one board item (module docstring)."""

    def publish(self, value: T, render: Callable[[int], bytes], *, content: Any, first_version: int) -> Versioned[T]:
        """Swap in `value` (its body is `render(version)`) unless its `content` is unchanged;
        returns what is current after."""

        def make(cur: Versioned[T] | None) -> Versioned[T]:
            if cur is not None and cur.content == content:
                return cur
            version = max(first_version, 1) if cur is None else cur.version + 1
            return Versioned(version, value, render(version), content)

        return self._swap(make)
