"""What the sidecar's log handler SHOWS (configure_logging: the RepeatFilter that folds repeats
of one cause, redaction), as text: caplog sees records before that handler's filter."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from harvester.observability.logs import RepeatFilter, configure_logging


@contextmanager
def shown_log(every_s: float = 300.0) -> Iterator[io.StringIO]:
    out = io.StringIO()
    configure_logging("DEBUG", "text", out, repeats=RepeatFilter(every_s=every_s, clock=lambda: 0.0))
    try:
        yield out
    finally:
        root = logging.getLogger()
        for h in [h for h in root.handlers if h.get_name() == "harvester"]:
            root.removeHandler(h)
