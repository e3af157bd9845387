"""Progress of a long command on a terminal, and silence everywhere else (CI logs, pipes, files).

Every command that runs longer than a few seconds (simulate, sweep, the evaluations) reports
through one `Progress`: a single line on stderr, redrawn in place (`\\r`) at most every
`min_interval_s` of wall time, ended with a newline by `close()`. It is enabled only when the
stream is a terminal (`isatty()`) and the caller did not ask for quiet (`--quiet`), and never
when TERM is "dumb"; otherwise every call returns at once and nothing is written, so a
command's stdout/stderr in CI or a pipe carries its results only.

    with Progress(len(cells), "sweep") as bar:
        for row in rows:
            bar.advance(note=f"{row['policy']} seed {row['seed']}")

`update(done, note)` sets the position instead (the simulator reports simulated seconds).
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Callable, TextIO

WIDTH = 28


def interactive(stream: TextIO | None = None) -> bool:
    """True when `stream` (default stderr) is a terminal someone watches."""
    s = stream if stream is not None else sys.stderr
    try:
        return bool(s.isatty()) and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


class Progress:
    """One progress line: `label [####----]  37.5%  done/total  elapsed  note` (module docstring)."""

    def __init__(self, total: float, label: str, *, stream: TextIO | None = None, quiet: bool = False,
                 unit: str = "", fmt: Callable[[float], str] | None = None, min_interval_s: float = 0.25,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = max(float(total), 1e-9)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and interactive(self.stream)
        self.unit = unit
        self._fmt = fmt or (lambda x: f"{x:g}")
        self.min_interval_s = min_interval_s
        self._clock = clock
        self._t0 = clock()
        self._last = -float("inf")
        self.done = 0.0
        self._width = 0

    def advance(self, n: float = 1, note: str = "") -> None:
        self.update(self.done + n, note)

    def update(self, done: float, note: str = "", force: bool = False) -> None:
        self.done = done
        if not self.enabled:
            return
        now = self._clock()
        if not force and now - self._last < self.min_interval_s and done < self.total:
            return
        self._last = now
        frac = min(1.0, max(0.0, done / self.total))
        filled = int(frac * WIDTH)
        elapsed = now - self._t0
        unit = f" {self.unit}" if self.unit else ""
        line = (f"{self.label} [{'#' * filled}{'-' * (WIDTH - filled)}] {frac * 100:5.1f}%  "
                f"{self._fmt(done)}/{self._fmt(self.total)}{unit}  {elapsed:,.0f} s" + (f"  {note}" if note else ""))
        pad = max(0, self._width - len(line))  # wipe what a longer previous line left
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()

    def close(self, note: str = "") -> None:
        if self.enabled:
            self.update(self.done, note, force=True)
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
