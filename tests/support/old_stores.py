"""A history store file as an older release left it: the first migrations only (migration tests)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harvester.history.migrations import MIGRATIONS


def store_file_at(path: Path, migrations: int, *rows_sql: str) -> Path:
    """A SQLite file with the first `migrations` schema migrations applied, then `rows_sql` run."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for version, statements in MIGRATIONS[:migrations]:
            for sql in statements:
                db.execute(sql)
            db.execute("INSERT INTO schema_version VALUES (?)", (version,))
        for sql in rows_sql:
            db.execute(sql)
    return path
