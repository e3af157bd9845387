"""Reading an operator's text file (settings, scenario, reimage log) with a one-line error."""

from __future__ import annotations

from pathlib import Path


def read_text(path: str | Path, error: type[Exception]) -> str:
    """The file's UTF-8 text; an unreadable or non-UTF-8 file raises `error` naming the path."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{p}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise error(f"{p}: not UTF-8 text") from None
