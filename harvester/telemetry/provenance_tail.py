"""Provenance files read incrementally (Morpheus §4's inputs): the NameNode audit log and the
provenance JSONL, each from the offset it was read to before.

`ProvenanceFiles.read(source, cursor)` returns the events of the complete lines after
`cursor` (at most `max_lines`; a partial last line is left for the next read, since the
NameNode may be writing it) and the new cursor; the loop stores both in one transaction
(loop/morpheus_ingest.py). A file is identified by device:inode: when the identity changes
(log4j rotated `hdfs-audit.log` to `hdfs-audit.log.1`) the rest of the old file is read from
`<path>.1` if it is still that file, then the new one from 0; a file shorter than the offset
was truncated and is read from 0. A missing file is no error (it may not exist yet).
Parsing is harvester.telemetry.provenance_log's; unparsable lines are counted, never guessed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Protocol

from harvester.models.provenance import FileAccess, ProvenanceCursor, RunRecord
from harvester.telemetry.provenance_log import ParsedProvenance, parse_audit_log, parse_jsonl

AUDIT, JSONL = "audit-log", "jsonl"


@dataclass(frozen=True)
class ProvenanceBatch:
    source: str
    accesses: tuple[FileAccess, ...] = ()
    runs: tuple[RunRecord, ...] = ()
    cursor: ProvenanceCursor | None = None
    lines: int = 0
    problems: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


class ProvenanceSource(Protocol):
    """Port of the provenance ingest loop: named sources, each read from a cursor."""

    def sources(self) -> tuple[str, ...]: ...

    def read(self, source: str, cursor: ProvenanceCursor | None) -> ProvenanceBatch: ...


def _file_id(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}"


class ProvenanceFiles:
    """The configured audit log and/or JSONL file (module docstring)."""

    def __init__(self, *, audit_log: Path | None = None, jsonl: Path | None = None, tz: tzinfo,
                 max_lines: int = 200_000) -> None:
        self._paths = {name: p for name, p in ((AUDIT, audit_log), (JSONL, jsonl)) if p is not None}
        self._tz = tz
        self._max_lines = max_lines

    def sources(self) -> tuple[str, ...]:
        return tuple(self._paths)

    def read(self, source: str, cursor: ProvenanceCursor | None) -> ProvenanceBatch:
        path = self._paths[source]
        try:
            st = path.stat()
        except FileNotFoundError:
            return ProvenanceBatch(source, cursor=cursor, notes=(f"{path} does not exist (yet)",))
        fid = _file_id(st)
        notes: list[str] = []
        lines: list[str] = []
        offset = 0
        if cursor is not None and cursor.file_id == fid:
            offset = cursor.offset
            if st.st_size < offset:
                notes.append(f"{path} is shorter than the offset {offset}: truncated, read from 0")
                offset = 0
        elif cursor is not None:
            old = Path(f"{path}.1")
            try:
                if _file_id(old.stat()) == cursor.file_id:
                    rest, _ = _lines(old, cursor.offset, self._max_lines)
                    lines.extend(rest)
                    notes.append(f"{path} was rotated: the rest of {old} read first ({len(rest)} lines)")
                else:
                    notes.append(f"{path} was replaced; the old file is gone, lines after offset {cursor.offset} of it are lost")
            except FileNotFoundError:
                notes.append(f"{path} was replaced; the old file is gone, lines after offset {cursor.offset} of it are lost")
        more, offset = _lines(path, offset, self._max_lines - len(lines))
        lines.extend(more)
        parsed = self._parse(source, lines)
        return ProvenanceBatch(source, parsed.accesses, parsed.runs, ProvenanceCursor(source, str(path), fid, offset),
                               len(lines), len(parsed.problems), tuple(notes))

    def _parse(self, source: str, lines: list[str]) -> ParsedProvenance:
        return parse_audit_log(lines, tz=self._tz) if source == AUDIT else parse_jsonl(lines)


def _lines(path: Path, offset: int, limit: int) -> tuple[list[str], int]:
    """Complete lines from `offset` (at most `limit`) and the offset after the last one."""
    out: list[str] = []
    if limit <= 0:
        return out, offset
    with path.open("rb") as f:
        f.seek(offset)
        while len(out) < limit:
            raw = f.readline()
            if not raw.endswith(b"\n"):
                break  # end of file, or a line still being written
            out.append(raw.decode("utf-8", errors="replace"))
            offset += len(raw)
    return out, offset
