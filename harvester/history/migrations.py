"""Schema migrations of the SQLite history store, applied in order on open.

Append a new `(version, statements)` entry to change the schema; never edit an applied one.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE node_samples (
                t REAL NOT NULL,
                node_id TEXT NOT NULL,
                state TEXT NOT NULL,
                rack TEXT NOT NULL,
                hostname TEXT NOT NULL,
                total_memory_mb INTEGER NOT NULL,
                total_vcores INTEGER NOT NULL,
                used_memory_mb INTEGER NOT NULL,
                used_vcores INTEGER NOT NULL,
                num_containers INTEGER NOT NULL,
                node_cpu_cores REAL,
                containers_cpu_vcores REAL,
                node_memory_mb REAL,
                containers_memory_mb REAL,
                physical_cores REAL
            )""",
            "CREATE INDEX node_samples_by_time ON node_samples (t, node_id)",
            "CREATE INDEX node_samples_by_node ON node_samples (node_id, t)",
        ),
    ),
    (
        2,
        (
            # YARN-H (OSDI'16 §4.1): fitted utilization classes and the tenant → class map, one
            # set of rows per model version; margins per class (paper 004 §4); finished job runs
            # for Algorithm 1 lines 3-4.
            """CREATE TABLE class_models (
                version INTEGER PRIMARY KEY,
                fitted_at REAL NOT NULL,
                params TEXT NOT NULL,
                skipped TEXT NOT NULL
            )""",
            """CREATE TABLE utilization_classes (
                version INTEGER NOT NULL,
                class_id TEXT NOT NULL,
                pattern TEXT NOT NULL,
                average REAL NOT NULL,
                peak REAL NOT NULL,
                tenants INTEGER NOT NULL,
                weight REAL NOT NULL,
                PRIMARY KEY (version, class_id)
            )""",
            """CREATE TABLE tenant_classes (
                version INTEGER NOT NULL,
                tenant TEXT NOT NULL,
                class_id TEXT NOT NULL,
                pattern TEXT NOT NULL,
                average REAL NOT NULL,
                peak REAL NOT NULL,
                periodic_share REAL NOT NULL,
                std REAL NOT NULL,
                samples INTEGER NOT NULL,
                fallback TEXT NOT NULL,
                PRIMARY KEY (version, tenant)
            )""",
            """CREATE TABLE margin_models (
                version INTEGER PRIMARY KEY,
                fitted_at REAL NOT NULL,
                quantile REAL NOT NULL,
                step_s REAL NOT NULL
            )""",
            """CREATE TABLE class_margins (
                version INTEGER NOT NULL,
                class_id TEXT NOT NULL,
                margin REAL,
                changes INTEGER NOT NULL,
                mean_change REAL,
                PRIMARY KEY (version, class_id)
            )""",
            """CREATE TABLE job_runs (
                app_id TEXT PRIMARY KEY,
                job_name TEXT NOT NULL,
                started_at REAL NOT NULL,
                finished_at REAL NOT NULL,
                peak_containers INTEGER NOT NULL,
                container_seconds REAL
            )""",
            "CREATE INDEX job_runs_by_finish ON job_runs (finished_at, app_id)",
            "CREATE INDEX job_runs_by_name ON job_runs (job_name, finished_at)",
        ),
    ),
    (
        3,
        (
            # Live harvesting: per-tenant 2-minute slots folded in at every poll
            # (models/tenant_slots.py, OSDI'16 §3.2) so a refit reads ≤ 30 days × 720 slots per
            # tenant instead of raw node samples; sums and counts, so partial slots add up.
            """CREATE TABLE tenant_slots (
                t REAL NOT NULL,
                tenant TEXT NOT NULL,
                util_sum REAL NOT NULL,
                polls INTEGER NOT NULL,
                nodes INTEGER NOT NULL,
                PRIMARY KEY (t, tenant)
            )""",
            # Each node's total before Harvester's first capacity update (domain.NodeBaseline):
            # after a restart the RM's total is Harvester's own number.
            """CREATE TABLE node_baselines (
                node_id TEXT PRIMARY KEY,
                hostname TEXT NOT NULL,
                memory_mb INTEGER NOT NULL,
                vcores INTEGER NOT NULL,
                seen_at REAL NOT NULL
            )""",
        ),
    ),
    (
        4,
        (
            # HDFS-H (OSDI'16 §4.2): fitted grids with, per tenant, its cell and the statistics
            # used (models/hdfs_grid_model.py); reimages detected from NameNode JMX and each
            # DataNode's last observation (models/reimage_detection.py); the published
            # placement-table versions and why each was published (decisions/hdfs_table.py).
            """CREATE TABLE hdfs_grids (
                version INTEGER PRIMARY KEY,
                fitted_at REAL NOT NULL,
                window_s REAL NOT NULL,
                row_bounds TEXT NOT NULL,
                col_bounds TEXT NOT NULL,
                imbalance REAL NOT NULL
            )""",
            """CREATE TABLE hdfs_grid_tenants (
                version INTEGER NOT NULL,
                tenant TEXT NOT NULL,
                environment TEXT NOT NULL,
                row INTEGER NOT NULL,
                col INTEGER NOT NULL,
                reimages_per_server_month REAL NOT NULL,
                peak_cpu REAL NOT NULL,
                available_bytes INTEGER NOT NULL,
                datanodes INTEGER NOT NULL,
                reimage_events INTEGER NOT NULL,
                observed_server_days REAL NOT NULL,
                cpu_samples INTEGER NOT NULL,
                reimage_source TEXT NOT NULL,
                cpu_source TEXT NOT NULL,
                PRIMARY KEY (version, tenant)
            )""",
            """CREATE TABLE hdfs_reimages (
                t REAL NOT NULL,
                hostname TEXT NOT NULL,
                tenant TEXT NOT NULL,
                datanode_id TEXT NOT NULL,
                source TEXT NOT NULL,
                reason TEXT NOT NULL
            )""",
            "CREATE INDEX hdfs_reimages_by_time ON hdfs_reimages (t, hostname)",
            """CREATE TABLE hdfs_datanodes (
                name TEXT PRIMARY KEY,
                hostname TEXT NOT NULL,
                datanode_id TEXT NOT NULL,
                t REAL NOT NULL,
                first_seen REAL NOT NULL,
                num_blocks INTEGER NOT NULL,
                block_pool_used INTEGER NOT NULL,
                nn_started_ms INTEGER NOT NULL,
                cluster_blocks INTEGER NOT NULL
            )""",
            """CREATE TABLE hdfs_table_versions (
                version INTEGER PRIMARY KEY,
                generated_at REAL NOT NULL,
                grid_version INTEGER NOT NULL,
                datanodes INTEGER NOT NULL,
                busy INTEGER NOT NULL,
                reasons TEXT NOT NULL
            )""",
        ),
    ),
    (
        5,
        (
            # The decisions loops acted on, with their formula, inputs, data time and fate
            # (domain.DecisionRecord; DESIGN.md principle 4), for `harvester explain` when no
            # sidecar runs; kept store.decision_log_days.
            """CREATE TABLE decision_log (
                at REAL NOT NULL,
                loop TEXT NOT NULL,
                kind TEXT NOT NULL,
                target TEXT NOT NULL,
                reason TEXT NOT NULL,
                fate TEXT NOT NULL,
                stimulus_id TEXT NOT NULL,
                detail TEXT NOT NULL,
                node_id TEXT NOT NULL,
                tenant TEXT NOT NULL,
                app_id TEXT NOT NULL,
                data_as_of REAL,
                inputs TEXT NOT NULL
            )""",
            "CREATE INDEX decision_log_by_time ON decision_log (at)",
            "CREATE INDEX decision_log_by_node ON decision_log (node_id, at)",
            "CREATE INDEX decision_log_by_tenant ON decision_log (tenant, at)",
            "CREATE INDEX decision_log_by_target ON decision_log (target, at)",
            "CREATE INDEX decision_log_by_app ON decision_log (app_id, at)",
        ),
    ),
    (
        6,
        (
            # Morpheus (paper 002): job runs keep the AM's launch, final status, queue and where
            # the row came from (rm, sim, synthesized-demo); a run's skyline as polled while it
            # ran (§5), as JSON arrays per step; provenance events from the NameNode audit log
            # or JSONL (§4) with the offset each source was read to (written in one transaction
            # with the events it produced); SLO sign-off contracts with their status history.
            "ALTER TABLE job_runs ADD COLUMN launched_at REAL",
            "ALTER TABLE job_runs ADD COLUMN final_status TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE job_runs ADD COLUMN queue TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE job_runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'rm'",
            """CREATE TABLE job_run_usage (
                app_id TEXT PRIMARY KEY,
                step_s REAL NOT NULL,
                origin_t REAL NOT NULL,
                first_s REAL NOT NULL,
                last_s REAL NOT NULL,
                memory_mb TEXT NOT NULL,
                vcores TEXT NOT NULL
            )""",
            """CREATE TABLE provenance_accesses (
                t REAL NOT NULL,
                access TEXT NOT NULL,
                path TEXT NOT NULL,
                run_id TEXT,
                actor TEXT NOT NULL,
                op TEXT NOT NULL,
                source TEXT NOT NULL
            )""",
            "CREATE INDEX provenance_accesses_by_time ON provenance_accesses (t)",
            """CREATE TABLE provenance_runs (
                run_id TEXT PRIMARY KEY,
                job TEXT NOT NULL,
                submitted_at REAL NOT NULL,
                started_at REAL,
                finished_at REAL,
                source TEXT NOT NULL
            )""",
            """CREATE TABLE provenance_cursors (
                source TEXT PRIMARY KEY,
                path TEXT NOT NULL,
                file_id TEXT NOT NULL,
                offset INTEGER NOT NULL,
                read_at REAL NOT NULL
            )""",
            """CREATE TABLE slo_contracts (
                job TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                doc TEXT NOT NULL,
                updated_at REAL NOT NULL
            )""",
        ),
    ),
)

MIGRATIONS += (
    (
        7,
        (
            # Issue 16: every poll's primary utilization per node as one float32 vector (the raw
            # samples the reaction-time reserve is fitted from, models/reaction_margins.py), kept
            # for store.raw_samples_retention_days; the node order of a vector is a node set.
            """CREATE TABLE node_sets (
                id INTEGER PRIMARY KEY,
                nodes TEXT NOT NULL UNIQUE
            )""",
            """CREATE TABLE primary_vectors (
                t REAL NOT NULL,
                node_set INTEGER NOT NULL,
                util BLOB NOT NULL
            )""",
            "CREATE INDEX primary_vectors_by_time ON primary_vectors (t)",
            # how a margin model was fitted (change / reaction / fixed), its horizon, per class the source
            "ALTER TABLE margin_models ADD COLUMN method TEXT NOT NULL DEFAULT 'change'",
            "ALTER TABLE margin_models ADD COLUMN horizon_s REAL",
            "ALTER TABLE class_margins ADD COLUMN source TEXT NOT NULL DEFAULT 'slots'",
        ),
    ),
)

MIGRATIONS += (
    (
        8,
        (
            # The Resource Estimator's REST API (advice/estimator_service.py, issue 26): its skyline
            # history per run (pipeline, run) in insertion order (`seq`, never reused: it orders a
            # bucket of the emulated HashMap), each run's skylines (RLE of containers as JSON
            # [[t, n], ...]), the largest number of runs ever held (the HashMap's capacity never
            # shrinks) and the stored estimate per pipeline (returned without re-solving).
            """CREATE TABLE estimator_runs (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                pipeline_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                UNIQUE (pipeline_id, run_id)
            )""",
            """CREATE TABLE estimator_skylines (
                run_seq INTEGER NOT NULL,
                idx INTEGER NOT NULL,
                job_id TEXT NOT NULL,
                container_memory_mb INTEGER NOT NULL,
                container_vcores INTEGER NOT NULL,
                allocation TEXT NOT NULL,
                PRIMARY KEY (run_seq, idx)
            )""",
            """CREATE TABLE estimator_estimates (
                pipeline_id TEXT PRIMARY KEY,
                container_memory_mb INTEGER NOT NULL,
                container_vcores INTEGER NOT NULL,
                allocation TEXT NOT NULL,
                solved_at REAL NOT NULL
            )""",
            """CREATE TABLE estimator_meta (
                key TEXT PRIMARY KEY,
                value INTEGER NOT NULL
            )""",
        ),
    ),
)

MIGRATIONS += (
    (
        9,
        (
            # Issue 29: the reaction-time reserve's incremental summary (models/rise_summary.py):
            # per tenant and UTC day the sparse histogram of rises (bin indices uint16, counts
            # int64), and where the fold stands (one row).
            """CREATE TABLE rise_summaries (
                day INTEGER NOT NULL,
                tenant TEXT NOT NULL,
                bins BLOB NOT NULL,
                counts BLOB NOT NULL,
                PRIMARY KEY (day, tenant)
            )""",
            """CREATE TABLE rise_fold_state (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                horizon_s REAL NOT NULL,
                interval_s REAL,
                folded_until REAL NOT NULL,
                bins INTEGER NOT NULL
            )""",
        ),
    ),
)

MIGRATIONS += (
    (
        10,
        (
            # The apps the RM was still running at the jobs loop's last poll (issue 28: whatif
            # replays them, a long-lived service included): one row per app, updated in place at
            # every poll, deleted when the app finishes or is no longer alive (running_sqlite.py).
            """CREATE TABLE running_apps (
                app_id TEXT PRIMARY KEY,
                job_name TEXT NOT NULL,
                name TEXT NOT NULL,
                queue TEXT NOT NULL,
                state TEXT NOT NULL,
                started_at REAL NOT NULL,
                containers INTEGER NOT NULL,
                allocated_mb INTEGER NOT NULL,
                allocated_vcores INTEGER NOT NULL,
                preempted INTEGER,
                seen_at REAL NOT NULL
            )""",
        ),
    ),
)

LATEST_VERSION = MIGRATIONS[-1][0]
