"""Shared helpers for the trace loaders: bounded CSV reads with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pandas is imported where a trace is read (start-up cost)
    import pandas as pd


class TraceError(Exception):
    """A trace file could not be read or does not have the expected shape (one line)."""


def read_table(path: str | Path, *, limit: int | None, names: Sequence[str] | None = None,
               usecols: Sequence[int | str] | None = None, header: int | None | str = "infer",
               sep: str = ",", **kw: Any) -> pd.DataFrame:
    """Read at most `limit` rows of a (possibly gzip'ed) delimited file with pandas' C parser."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise TraceError(f"{p}: no such trace file")
    if limit is not None and limit < 1:
        raise TraceError(f"{p}: limit must be >= 1, got {limit}")
    try:
        return pd.read_csv(p, sep=sep, header=header, names=names, usecols=usecols, nrows=limit,
                           engine="c", **kw)
    except (ValueError, pd.errors.ParserError, OSError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TraceError(f"{p}: cannot parse ({first})") from None


def require_columns(df: pd.DataFrame, path: str | Path, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise TraceError(f"{path}: missing column(s) {', '.join(missing)} (have {', '.join(map(str, df.columns))})")
