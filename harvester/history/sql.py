"""SQL shared by the SQLite store's tables: the time-window read of the store contract."""

from __future__ import annotations

from typing import Collection, Sequence


def window_select(select: str, time_col: str, *, since: float, until: float | None, key_col: str,
                  keys: Collection[str] | None, order_by: str,
                  equal: Sequence[tuple[str, object]] = ()) -> tuple[str, list[object]] | None:
    """`select` + `WHERE time_col >= since [AND time_col < until] [AND col = value …]
    [AND key_col IN keys] ORDER BY …`; an `equal` pair whose value is None is no filter.

    Returns (sql, args), or None when `keys` is given but empty (the answer is empty: no query).
    """
    sql = f"{select} WHERE {time_col} >= ?"
    args: list[object] = [since]
    if until is not None:
        sql += f" AND {time_col} < ?"
        args.append(until)
    for col, value in equal:
        if value is not None:
            sql += f" AND {col} = ?"
            args.append(value)
    if keys is not None:
        wanted = list(keys)
        if not wanted:
            return None
        sql += f" AND {key_col} IN ({', '.join('?' * len(wanted))})"
        args.extend(wanted)
    return f"{sql} ORDER BY {order_by}", args
