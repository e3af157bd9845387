"""Tick of Morpheus's provenance ingest (paper 002 §4's inputs), every
`morpheus.provenance.poll_interval_s`: each source (the NameNode audit log, the provenance
JSONL; telemetry/provenance_tail.py) is read from the cursor the store holds for it, and its
events are stored TOGETHER with the new cursor (one transaction: a crash neither loses nor
duplicates lines). Events older than the retention are pruned. What each source reached and
found (lines, events, unusable lines, rotation notes) is published on the board
(board/morpheus.INGEST) and counted in metrics. The refit loop reads the events from the store.
"""

from __future__ import annotations

from harvester.board.morpheus import MorpheusBoard, SourceStatus
from harvester.history.store import HistoryStore
from harvester.loop.runner import TickResult
from harvester.observability.metrics import Metrics
from harvester.telemetry.provenance_tail import ProvenanceSource


class IngestProvenance:
    def __init__(self, source: ProvenanceSource, store: HistoryStore, board: MorpheusBoard, metrics: Metrics, *,
                 retention_s: float) -> None:
        self._source = source
        self._store = store
        self._board = board
        self._metrics = metrics
        self._retention_s = retention_s

    def tick(self, now: float) -> TickResult:
        summary: dict[str, object] = {}
        for name in self._source.sources():
            batch = self._source.read(name, self._store.provenance_cursor(name))
            events = self._store.append_provenance(name, batch.accesses, batch.runs, batch.cursor, now)
            self._metrics.record_provenance(name, events, batch.problems)
            self._metrics.record_rows_written("provenance", events)
            cur = batch.cursor
            self._board.publish_source(SourceStatus(name, cur.path if cur else "", cur.offset if cur else 0, now,
                                                    batch.lines, events, batch.problems, batch.notes))
            summary[name] = {"lines": batch.lines, "events": events, "problems": batch.problems}
        pruned = self._store.prune_provenance(now - self._retention_s)
        self._metrics.record_rows_pruned("provenance", pruned)
        return TickResult({**summary, "pruned": pruned})
