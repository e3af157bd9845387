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
)

LATEST_VERSION = MIGRATIONS[-1][0]
