"""Structured logging: `text` for people, `json` (one object per line) for log shippers.

Call sites attach context with `extra={"loop": ..., "node": ...}`; both formats show it.

Failures repeat: with the RM down, every tick of every loop that asks it fails the same way.
`RepeatFilter` (installed by `configure_logging`) turns that into one line per failure cause
with a repeat count: the first record of a (logger, message, loop, cause) passes, the same
again within `repeat_every_s` is counted, not shown, and the next one after that passes with
`repeats=N`. A network failure (refused, DNS, TLS, timeout: `failures.is_network_failure`) is
told in one line — the call, where, the plain cause — without its traceback; any other
exception keeps its traceback on the first line of its cause. The filter only changes how
records are shown: what fails, and how the loops react to it, is decided elsewhere.

Every line is redacted last (docs/security.md): the userinfo and secret query values of any
URL (rm_client.redact), `Bearer <token>` values, and the exact strings registered as secrets
(the admin token, the Kerberos keytab's path) become `***`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Callable

from harvester.observability.failures import is_network_failure, summary

from rm_client.redact import MASK, redact_text

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}
#: Default seconds between two lines of the same failure cause.
REPEAT_EVERY_S = 300.0


def _extras(record: logging.LogRecord) -> dict[str, object]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")}


class RepeatFilter(logging.Filter):
    """One line per failure cause with a repeat count (module docstring); `clock` is monotonic seconds."""

    def __init__(self, every_s: float = REPEAT_EVERY_S, clock: Callable[[], float] = time.monotonic,
                 max_causes: int = 1024) -> None:
        super().__init__()
        self.every_s = every_s
        self._clock = clock
        self._max = max_causes
        self._lock = threading.Lock()
        self._seen: OrderedDict[tuple[object, ...], list[float]] = OrderedDict()  # key -> [last shown, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        args = record.args if isinstance(record.args, tuple) else ()
        if exc is None:
            exc = next((a for a in args if isinstance(a, BaseException)), None)
        if exc is None:
            return True
        told = summary(exc)
        key = (record.name, str(record.msg), getattr(record, "loop", None), type(exc).__name__, told)
        now = self._clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and now - seen[0] < self.every_s:
                seen[1] += 1
                return False
            self._seen[key] = [now, 0.0]
            self._seen.move_to_end(key)
            while len(self._seen) > self._max:
                self._seen.popitem(last=False)
        if seen is not None and seen[1]:
            record.repeats = int(seen[1])  # shown as repeats=N: how many were not shown since the last line
        if is_network_failure(exc):
            if record.exc_info:  # "tick failed" + traceback -> "tick failed: GET /p at URL: connection refused"
                record.msg, record.args = f"{record.getMessage()}: {told}", ()
                record.exc_info, record.exc_text = None, None
            else:  # the exception is an argument of the message: told plainly instead
                record.args = tuple(told if a is exc else a for a in args)
        return True
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=\-]+")


class Redactor:
    """Masks credentials in a finished log line (module docstring)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, line: str) -> str:
        for secret in self.secrets:
            line = line.replace(secret, MASK)
        return _BEARER.sub(lambda m: m.group(1) + MASK, redact_text(line))


class JsonFormatter(logging.Formatter):
    def __init__(self, redact: Redactor | None = None) -> None:
        super().__init__()
        self._redact = redact or Redactor()

    def format(self, record: logging.LogRecord) -> str:
        return self._redact(self._format(record))

    def _format(self, record: logging.LogRecord) -> str:
        doc: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        doc.update(_extras(record))
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self, redact: Redactor | None = None) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
        self._redact = redact or Redactor()

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = _extras(record)
        if extras:
            line += " " + " ".join(f"{k}={v}" for k, v in sorted(extras.items()))
        return self._redact(line)


def configure_logging(level: str = "INFO", fmt: str = "text", stream=None, *,
                      repeats: RepeatFilter | None = None, secrets: Iterable[str] = ()) -> None:
    """Install one handler on the root logger (replacing earlier ones from this function), with
    a `RepeatFilter` (`repeats`, or a default one); `secrets` are masked wherever they appear."""
    handler = logging.StreamHandler(stream or sys.stderr)
    redact = Redactor(secrets)
    handler.setFormatter(JsonFormatter(redact) if fmt == "json" else TextFormatter(redact))
    handler.addFilter(repeats if repeats is not None else RepeatFilter())
    handler.set_name("harvester")
    root = logging.getLogger()
    for h in list(root.handlers):
        if h.get_name() == "harvester":
            root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
