"""The `HistoryStore` port (DESIGN.md principle 5).

Contract (tests/history check it against the one implementation, history/sqlite.py, on a file
and on `:memory:`):
- writes are appends; `append_*` returns how many rows were stored;
- reads return rows ordered by time then node id, within `[since, until)`;
- `prune(before)` removes raw node samples and primary vectors older than `before` and returns counts per table
  (tenant slots have their own `prune_tenant_slots`: raw samples are kept for days, slots for
  the model window);
- the store never reads a clock: every time comes from the caller.
Models never write to the store themselves (principle 9): loops read history, call pure
`fit`, and persist what they got back.
"""

from __future__ import annotations

from typing import Callable, Collection, Iterator, Protocol, Sequence, TypeVar

import numpy as np

from harvester.decisions.hdfs_table import PublishedVersion
from harvester.domain import DecisionRecord, NodeBaseline, NodeSample, Resources
from harvester.models.estimator_history import EstimatorHistory, RecurrenceId, ResourceSkyline
from harvester.models.hdfs_grid_model import GridModel
from harvester.models.job_history import JobRun, RunningApp
from harvester.models.margins import MarginModel
from harvester.models.provenance import FileAccess, ProvenanceCursor, RunRecord
from harvester.models.reaction_margins import PrimaryBlock
from harvester.models.reimage_detection import DataNodeObservation, ReimageEvent
from harvester.models.rise_summary import FoldState, TenantDay
from harvester.models.skyline_formats import Rle
from harvester.models.slo_contract import SloContract
from harvester.models.tenant_slots import SlotRow, TenantSlot
from harvester.models.utilization_classes import TenantClassModel

class StoreError(Exception):
    """The store cannot be opened or used (corrupt file, newer schema, unwritable path)."""

    dependency = "store"

T = TypeVar("T")


class HistoryStore(Protocol):
    def append_node_samples(self, samples: Sequence[NodeSample]) -> int: ...

    def node_samples(
        self, *, since: float, until: float | None = None, node_ids: Collection[str] | None = None
    ) -> list[NodeSample]: ...

    def node_ids(self) -> list[str]: ...

    def prune(self, before: float) -> dict[str, int]: ...

    def schema_version(self) -> int: ...

    def close(self) -> None: ...

    # --- harvesting (schema version 2) ----------------------------------------------------
    # Class models and margin models are stored whole per version (saving a version again
    # replaces it); `class_model()` / `margin_model()` without a version return the latest.
    # Job runs are keyed by app id (appending one again replaces it) and read back ordered by
    # finish time then app id, within `[since, until)` of their finish time.

    def save_class_model(self, model: TenantClassModel) -> int: ...

    def class_model(self, version: int | None = None) -> TenantClassModel | None: ...

    def save_margin_model(self, model: MarginModel) -> int: ...

    def margin_model(self, version: int | None = None) -> MarginModel | None: ...

    def append_job_runs(self, runs: Sequence[JobRun]) -> int: ...

    def job_runs(
        self, *, since: float, until: float | None = None, job_names: Collection[str] | None = None,
        with_usage: bool = False,
    ) -> list[JobRun]: ...  # with_usage: each run's skyline (JobRun.usage) too (schema version 6)

    def prune_job_runs(self, before: float) -> int: ...  # runs that finished before `before`

    # --- apps still running (schema version 10) ------------------------------------------
    # The apps alive at the jobs loop's last poll, as it saw them (RunningApp) and when (`seen_at`):
    # `replace_running_apps` updates the given apps' rows in place and deletes every other row;
    # `append_job_runs` deletes the row of an app stored finished. `running_apps(since=)` gives
    # (app, seen_at) of the rows seen at or after `since`, by start time then app id.

    def replace_running_apps(self, apps: Sequence[RunningApp], seen_at: float) -> int: ...

    def running_apps(self, *, since: float = 0.0) -> list[tuple[RunningApp, float]]: ...

    def prune_model_versions(self, keep: int) -> dict[str, int]: ...  # all but the newest `keep` versions of
    # every versioned model (class models + their classes/tenants, margins, HDFS grids); rows removed per table

    # --- live harvesting (schema version 3) -----------------------------------------------
    # Tenant slots accumulate: `add_tenant_slots` ADDS each row's util_sum and polls to the
    # stored row of (tenant, start) (creating it) and keeps the larger node count; reads are
    # ordered by start then tenant, within `[since, until)` of the slot start; they are pruned
    # separately from raw node samples (`prune_tenant_slots`, the model window's retention).
    # Node baselines: the FIRST record of a node wins (later ones for it are ignored).

    def add_tenant_slots(self, slots: Sequence[TenantSlot]) -> int: ...

    def tenant_slots(
        self, *, since: float, until: float | None = None, tenants: Collection[str] | None = None
    ) -> list[TenantSlot]: ...

    def read_tenant_slots(self, consume: Callable[[Iterator[SlotRow]], T], *, since: float, until: float | None = None,
                          tenants: Collection[str] | None = None) -> T: ...  # the same rows as tuples, streamed

    def prune_tenant_slots(self, before: float) -> int: ...

    def record_node_baselines(self, baselines: Sequence[NodeBaseline]) -> int: ...

    def node_baselines(self) -> dict[str, NodeBaseline]: ...

    # --- primary vectors (schema version 7) -----------------------------------------------
    # One row per poll: the primary utilization of every harvested node (float32, NaN =
    # unknown) in the order of `node_ids`. Read back in time order as `PrimaryBlock`s of
    # consecutive polls with the same node order (bounded size), within `[since, until)`.

    def append_primary_vectors(self, times: Sequence[float], node_ids: Sequence[str], values: np.ndarray) -> int: ...

    def primary_vectors(self, *, since: float, until: float | None = None) -> Iterator[PrimaryBlock]: ...

    # --- rise summaries (schema version 9) ------------------------------------------------
    # The reaction reserve's incremental summary (models/rise_summary.py): `save_rise_fold`
    # adds the counts of `days` to the stored (day, tenant) rows, drops the days before
    # `keep_from_day` (all rows first when `reset`) and sets the fold state, in one transaction.
    # `rise_summaries` yields the rows from `from_day` on, ordered by day then tenant.

    def rise_fold_state(self) -> FoldState | None: ...

    def save_rise_fold(self, state: FoldState, days: Sequence[TenantDay], *, keep_from_day: int,
                       reset: bool = False) -> int: ...

    def rise_summaries(self, *, from_day: int) -> Iterator[TenantDay]: ...

    # --- HDFS-H (schema version 4) --------------------------------------------------------
    # Grids are stored whole per version with each tenant's cell and statistics (saving a
    # version again replaces it); `hdfs_grid()` without a version returns the latest.
    # Reimages (detected from NameNode JMX) are appended and read ordered by time then
    # hostname within `[since, until)`. DataNode observations are upserted by LiveNodes name.
    # Published table versions: one record per version, newest first on read; only the
    # newest 1,000 are kept (history/hdfs_sqlite.TABLE_VERSIONS_KEPT).

    def save_hdfs_grid(self, model: GridModel) -> int: ...

    def hdfs_grid(self, version: int | None = None) -> GridModel | None: ...

    def append_hdfs_reimages(self, events: Sequence[ReimageEvent]) -> int: ...

    def hdfs_reimages(self, *, since: float, until: float | None = None) -> list[ReimageEvent]: ...

    def save_hdfs_datanodes(self, observations: Sequence[DataNodeObservation]) -> int: ...

    def hdfs_datanodes(self) -> dict[str, DataNodeObservation]: ...

    def append_hdfs_table_version(self, record: PublishedVersion) -> int: ...

    def hdfs_table_versions(self, *, limit: int = 50) -> list[PublishedVersion]: ...

    # --- decision log (schema version 5) --------------------------------------------------
    # What loops acted on, with formula, inputs, data time and fate (domain.DecisionRecord),
    # for `harvester explain`. `decisions` answers the NEWEST first, at most `limit`, filtered
    # by the subjects given (node, tenant, target, any of `app_ids`, loop), within [since, until).

    def append_decisions(self, records: Sequence[DecisionRecord]) -> int: ...

    def decisions(self, *, since: float = 0.0, until: float | None = None, node_id: str | None = None,
                  tenant: str | None = None, target: str | None = None, app_ids: Collection[str] | None = None,
                  loop: str | None = None, limit: int = 50) -> list[DecisionRecord]: ...

    def prune_decisions(self, before: float) -> int: ...  # decided before `before`

    # --- Morpheus (schema version 6) ------------------------------------------------------
    # Job runs carry launch, final status, queue, origin and (append_job_runs) their skyline.
    # Provenance: accesses and JSONL runs are appended together with the source's cursor in
    # one transaction; `provenance` reads accesses within [since, until) by time and the runs
    # submitted in it. SLO contracts are upserted by job, each with its whole status history.

    def append_provenance(self, source: str, accesses: Sequence[FileAccess], runs: Sequence[RunRecord],
                          cursor: ProvenanceCursor | None, at: float) -> int: ...

    def provenance_cursor(self, source: str) -> ProvenanceCursor | None: ...

    def provenance(self, *, since: float, until: float | None = None) -> tuple[list[FileAccess], list[RunRecord]]: ...

    def prune_provenance(self, before: float) -> int: ...

    def save_slo_contract(self, contract: SloContract) -> int: ...

    def slo_contracts(self) -> dict[str, SloContract]: ...

    # --- the Resource Estimator's API (schema version 8) -----------------------------------
    # Its skyline history per run (pipeline, run) and its stored estimates, so they outlive a
    # restart. `add_estimator_history` stores all entries or none: `DuplicateRun` names the first
    # (in the given order) whose run already holds one of its job ids; a stored run keeps its
    # insertion place when skylines are appended. `estimator_history` answers runs in insertion
    # order with the largest number of runs ever held (advice/estimator_service.py turns both
    # into the Estimator's HashMap order). Estimates are upserted by pipeline.

    def add_estimator_history(self, entries: Sequence[tuple[RecurrenceId, Sequence[ResourceSkyline]]]) -> int: ...

    def estimator_history(self, pipeline_id: str | None = None, run_id: str | None = None) -> EstimatorHistory: ...

    def delete_estimator_history(self, rid: RecurrenceId) -> bool: ...

    def save_estimator_estimate(self, pipeline_id: str, allocation: Rle, container: Resources, at: float) -> int: ...

    def estimator_estimate(self, pipeline_id: str) -> tuple[Rle, Resources] | None: ...

    def delete_estimator_estimate(self, pipeline_id: str) -> bool: ...
