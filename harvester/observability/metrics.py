"""All of Harvester's Prometheus metrics, declared in one place (DESIGN.md principle 12).

Each metric has help text and fixed label names, and is recorded through a `record_*` method
so call sites never touch prometheus objects. `Metrics` takes its own `CollectorRegistry`, so
tests and simulations get an isolated registry instead of the process-global one.
Later stages add their metrics here, next to these.
"""

from __future__ import annotations

from collections import Counter as Counter_
from typing import Any, Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from harvester import __version__

CONTENT_TYPE = CONTENT_TYPE_LATEST

_FAST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The metric families of one running Harvester (or one simulation)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._children: dict[int, dict[str, Gauge]] = {}  # _set_series' children per gauge
        self._values: dict[int, dict[str, float]] = {}    # and the value each was last set to
        self._subcluster_states: dict[str, set[str]] = {}  # node states last reported per sub-cluster
        r = self.registry
        self.build_info = Info("harvester_build", "Harvester version.", registry=r)
        self.build_info.info({"version": __version__})

        # control loops
        self.loop_ticks = Counter(
            "harvester_loop_ticks_total", "Control-loop ticks by outcome (ok, error).", ["loop", "outcome"], registry=r
        )
        self.loop_tick_seconds = Histogram(
            "harvester_loop_tick_duration_seconds", "Wall time of one control-loop tick.", ["loop"],
            buckets=_FAST_BUCKETS, registry=r,
        )
        self.loop_last_tick = Gauge(
            "harvester_loop_last_tick_timestamp_seconds", "Clock time of the last completed tick.", ["loop"], registry=r
        )

        # telemetry
        self.telemetry_nodes = Gauge(
            "harvester_telemetry_nodes", "Nodes in the last cluster snapshot, by state.", ["state"], registry=r
        )
        self.telemetry_polls = Counter(
            "harvester_telemetry_polls_total", "Cluster polls by outcome (ok, error).", ["outcome"], registry=r
        )
        self.telemetry_age = Gauge(
            "harvester_telemetry_age_seconds", "Age of the newest good cluster snapshot at the last tick.", registry=r
        )

        # several ResourceManagers (rm.clusters; harvester/subclusters.py): the same, per sub-cluster
        self.subcluster_polls = Counter(
            "harvester_subcluster_polls_total", "Polls of each sub-cluster's RM by outcome (ok, error).",
            ["subcluster", "outcome"], registry=r,
        )
        self.subcluster_nodes = Gauge(
            "harvester_subcluster_nodes", "Nodes in each sub-cluster's last good poll, by state.",
            ["subcluster", "state"], registry=r,
        )
        self.subcluster_age = Gauge(
            "harvester_subcluster_telemetry_age_seconds",
            "Age of each sub-cluster's newest good poll at the last telemetry tick (its nodes get no action once stale).",
            ["subcluster"], registry=r,
        )
        self.subcluster_actions = Counter(
            "harvester_subcluster_actions_total",
            "Guard actions routed to each sub-cluster's RM, by kind (set_capacity, kill) and fate (sent, not_sent).",
            ["subcluster", "kind", "fate"], registry=r,
        )
        self.subcluster_harvested = Gauge(
            "harvester_subcluster_harvested_vcores",
            "Vcores the guard's last decision offers to batch work on each sub-cluster's harvested nodes.",
            ["subcluster"], registry=r,
        )

        # history store
        self.store_rows_written = Counter(
            "harvester_store_rows_written_total", "Rows written to the history store, by table.", ["table"], registry=r
        )
        self.store_rows_pruned = Counter(
            "harvester_store_rows_pruned_total", "Rows removed by retention, by table.", ["table"], registry=r
        )

        # advice (gRPC)
        self.grpc_requests = Counter(
            "harvester_grpc_requests_total", "gRPC requests by method and status code.", ["method", "code"], registry=r
        )
        self.grpc_seconds = Histogram(
            "harvester_grpc_request_duration_seconds", "gRPC request handling time.", ["method"],
            buckets=_FAST_BUCKETS, registry=r,
        )

        # admin / advice HTTP face
        self.admin_requests = Counter(
            "harvester_admin_http_requests_total", "Admin HTTP requests by route ((unknown), (malformed)), method and status.",
            ["route", "method", "code"], registry=r,
        )
        self.admin_connections = Gauge(
            "harvester_admin_http_connections", "Open connections to the admin HTTP server.", registry=r
        )
        self.admin_refused = Counter(
            "harvester_admin_http_refused_total",
            "Admin HTTP connections or requests refused, by why (max_connections, auth, max_long_polls, refit_rate).",
            ["why"], registry=r,
        )

        # harvesting (YARN-H: classes, Algorithm 1, the guard)
        self.harvest_node_vcores = Gauge(
            "harvester_harvest_node_vcores", "Capacity (vcores) the guard gives YARN on a node after its last decision.",
            ["node"], registry=r,
        )
        self.harvest_class_vcores = Gauge(
            "harvester_harvest_class_vcores", "Capacity (vcores) given to YARN, summed per utilization class.",
            ["class_id"], registry=r,
        )
        self.harvest_reserve = Gauge(
            "harvester_harvest_reserve_fraction", "Reserve kept free for the primary, fraction of a node's cores, per class.",
            ["class_id"], registry=r,
        )
        self.harvest_kills = Counter(
            "harvester_harvest_kills_total",
            "Kills the guard sent (in a dry run: decided, once per kill however many ticks decide it), by reason "
            "(signal_graceful, signal_forceful, rm_overcommit = cuts below allocation the RM enforces).",
            ["reason"], registry=r,
        )
        self.harvest_primary_rises = Counter(
            "harvester_harvest_primary_rises_total",
            "Rises of the primary (>= 1 % of a node's cores, between two guard decisions, on a node holding batch "
            "containers) by class and outcome: absorbed (the reserve took it, no kill) or killed. Reserve coverage = "
            "absorbed / all.",
            ["class_id", "outcome"], registry=r,
        )
        self.harvest_am_kills = Counter(
            "harvester_harvest_am_kills_total",
            "ApplicationMasters the guard let go as a last resort (capacity below the AMs' allocation, or an AM signalled), "
            "by reason (primary_short: only AMs left, burning at least the reserve, and the primary short).",
            ["reason"], registry=r,
        )
        self.harvest_capacity_updates = Counter(
            "harvester_harvest_capacity_updates_total",
            "Guard outcomes per node: sent (increase, decrease, cut, freeze; would_send in a dry run) or skipped (unchanged, hysteresis, rate_limit, stale).",
            ["outcome", "reason"], registry=r,
        )
        self.harvest_decision_seconds = Histogram(
            "harvester_harvest_decision_duration_seconds", "Wall time of one harvesting decision (guard, select_classes, fit).",
            ["decision"], buckets=_FAST_BUCKETS, registry=r,
        )
        self.harvest_classes = Gauge(
            "harvester_harvest_classes", "Utilization classes of the current model, per pattern.", ["pattern"], registry=r
        )
        self.harvest_tenants = Gauge(
            "harvester_harvest_tenants", "Primary tenants of the current model, per pattern.", ["pattern"], registry=r
        )
        self.harvest_model_version = Gauge(
            "harvester_harvest_model_version", "Version of the current utilization class model.", registry=r
        )
        self.harvest_action_errors = Counter(
            "harvester_harvest_action_errors_total",
            "Guard actions the RM refused or never got (set_capacity, kill); reported on the next tick.",
            ["action"], registry=r,
        )
        self.action_outcomes = Counter(
            "harvester_action_outcomes_total",
            "Actions an actuator handled, by kind and outcome: sent (accepted), failed (refused or never reached), "
            "unknown (may have been applied: the next snapshot tells), dropped (never sent: data older than the "
            "staleness limit at sending, or the tick's time budget spent).",
            ["action", "outcome"], registry=r,
        )
        self.harvest_stale_nodes = Gauge(
            "harvester_harvest_stale_nodes", "Nodes the guard could not act on at its last decision, by why.",
            ["why"], registry=r,
        )

        # HDFS-H (the 3x3 grid placement table)
        self.hdfs_table_version = Gauge(
            "harvester_hdfs_table_version", "Version of the published HDFS placement table (the HTTP ETag).", registry=r
        )
        self.hdfs_grid_version = Gauge(
            "harvester_hdfs_grid_version", "Version of the fitted 3x3 grid the table's cells come from.", registry=r
        )
        self.hdfs_datanodes = Gauge(
            "harvester_hdfs_datanodes", "DataNodes in the published table, by state (listed, busy, unclassified).",
            ["state"], registry=r,
        )
        self.hdfs_publishes = Counter(
            "harvester_hdfs_table_publishes_total",
            "Placement table versions published, by kind (structural = at once, soft = busy/free space); "
            "kind deferred counts polls that held a soft change back (min_version_interval_s).",
            ["kind"], registry=r,
        )
        self.hdfs_reimages = Counter(
            "harvester_hdfs_reimages_detected_total", "DataNode reimages detected from NameNode JMX history.", registry=r
        )
        self.hdfs_waiters = Gauge(
            "harvester_hdfs_table_waiters", "Open long-polls and watch streams waiting for a new table, by face.",
            ["face"], registry=r,
        )
        self.advice_waiters = Gauge(
            "harvester_advice_long_poll_waiters",
            "Open long-polls of the Java plug-ins' advice documents waiting for a new version, by document.",
            ["document"], registry=r,
        )
        self.node_ordering_version = Gauge(
            "harvester_node_ordering_version", "Version of the published node ordering (GET /v1/yarn/node-ordering).",
            registry=r,
        )
        self.node_ordering_advised = Gauge(
            "harvester_node_ordering_advised_nodes",
            "Nodes in the published node order, by job-length class (0 = no advice: the RM plug-in uses Hadoop's order).",
            ["job_type"], registry=r,
        )

        # Phoenix (constraint-aware placement)
        self.placement_tasks = Counter(
            "harvester_placement_tasks_total",
            "Tasks answered by ConstrainedPlacement.PlaceTasks, by outcome (placed = fits now, queued, relaxed = "
            "soft constraints relaxed by admission control, unplaceable).", ["outcome"], registry=r,
        )
        self.placement_seconds = Histogram(
            "harvester_placement_decision_duration_seconds",
            "Wall time of one PlaceTasks decision (CRV, M/G/1, admission control, ordering, placement).",
            buckets=_FAST_BUCKETS, registry=r,
        )

        # Morpheus (paper 002: SLOs, skylines, LowCost reservations, DRA)
        self.morpheus_jobs = Gauge(
            "harvester_morpheus_jobs",
            "Recurring jobs of the last refit and plan, by status (actionable, not_actionable = no SLO inferred, "
            "planned = placed by LowCost, not_planned, skyline_longer_than_window = terms LowCost must reject).",
            ["status"], registry=r,
        )
        self.morpheus_reservations = Gauge(
            "harvester_morpheus_reservations", "Reservations Harvester manages, by lifecycle state.", ["state"], registry=r,
        )
        self.morpheus_reservation_actions = Counter(
            "harvester_morpheus_reservation_actions_total",
            "Reservation actions by kind (submit, update, delete) and outcome (sent, refused, failed, dropped, dry_run).",
            ["action", "outcome"], registry=r,
        )
        self.morpheus_dra_grants = Counter(
            "harvester_morpheus_dra_grants_total", "DRA grants (§7) sent as reservation updates.", registry=r,
        )
        self.morpheus_nudges = Counter(
            "harvester_morpheus_nudges_total",
            "Queue-capacity nudges by outcome (sent, covered = the guard's own update, deferred).", ["outcome"], registry=r,
        )
        self.morpheus_plan_peak = Gauge(
            "harvester_morpheus_plan_peak_cost", "Peak of LowCost's planned cost c(t) over the LCM (fraction of the plan).",
            registry=r,
        )
        self.morpheus_provenance_events = Counter(
            "harvester_morpheus_provenance_events_total", "Provenance events (file accesses and runs) ingested, by source.",
            ["source"], registry=r,
        )
        self.morpheus_provenance_problems = Counter(
            "harvester_morpheus_provenance_problems_total", "Provenance lines that could not be used, by source.",
            ["source"], registry=r,
        )

        # Jockey (paper 001: deadline jobs resized through their reservation)
        self.jockey_jobs = Gauge(
            "harvester_jockey_jobs", "Deadline jobs at the last control tick, by state (running, idle, no_reservation, "
            "model_error).", ["state"], registry=r,
        )
        self.jockey_progress = Gauge(
            "harvester_jockey_progress", "Progress p of a deadline job's running app (totalworkWithQ, §4.2), 0..1.",
            ["job"], registry=r,
        )
        self.jockey_containers = Gauge(
            "harvester_jockey_allocation_containers", "A deadline job's allocation in containers: current = what its "
            "reservation holds now, decided = the control decision, target = the smallest allocation meeting the "
            "deadline (before hysteresis and the demand cap).", ["job", "kind"], registry=r,
        )
        self.jockey_finish = Gauge(
            "harvester_jockey_predicted_finish_seconds", "Predicted finish of a deadline job, seconds after its "
            "submission, at the decided and at the current allocation (F(a) = elapsed + slack·C_q(p, a)).",
            ["job", "at"], registry=r,
        )
        self.jockey_deadline = Gauge(
            "harvester_jockey_deadline_seconds", "A running deadline job's deadline, seconds after its submission.",
            ["job"], registry=r,
        )
        self.jockey_elapsed = Gauge(
            "harvester_jockey_elapsed_seconds", "Seconds since a running deadline job's submission.", ["job"], registry=r,
        )
        self.jockey_decisions = Counter(
            "harvester_jockey_decisions_total", "Control decisions by job and rule (raise, hold, lower, best_effort).",
            ["job", "rule"], registry=r,
        )
        self.jockey_updates = Counter(
            "harvester_jockey_reservation_updates_total",
            "Reservation updates Jockey decided, by outcome (sent, refused, failed, dropped, dry_run).", ["outcome"],
            registry=r,
        )

    # --- record helpers -------------------------------------------------------------------

    def record_tick(self, loop: str, ok: bool, seconds: float, at: float) -> None:
        self.loop_ticks.labels(loop, "ok" if ok else "error").inc()
        self.loop_tick_seconds.labels(loop).observe(seconds)
        if ok:
            self.loop_last_tick.labels(loop).set(at)

    def record_poll(self, ok: bool, nodes_by_state: dict[str, int] | None = None) -> None:
        self.telemetry_polls.labels("ok" if ok else "error").inc()
        if nodes_by_state is not None:
            self.telemetry_nodes.clear()
            for state, count in nodes_by_state.items():
                self.telemetry_nodes.labels(state).set(count)

    def record_telemetry_age(self, seconds: float) -> None:
        self.telemetry_age.set(seconds)

    def record_subcluster_poll(self, name: str, ok: bool, nodes_by_state: Mapping[str, int] | None,
                               age_s: float | None) -> None:
        self.subcluster_polls.labels(name, "ok" if ok else "error").inc()
        if nodes_by_state is not None:
            for state in list(self._subcluster_states.get(name, ())):
                if state not in nodes_by_state:
                    self.subcluster_nodes.remove(name, state)
            for state, count in nodes_by_state.items():
                self.subcluster_nodes.labels(name, state).set(count)
            self._subcluster_states[name] = set(nodes_by_state)
        if age_s is not None:
            self.subcluster_age.labels(name).set(age_s)

    def record_subcluster_actions(self, name: str, kind: str, fate: str, n: int) -> None:
        self.subcluster_actions.labels(name, kind, fate).inc(n)

    def record_subcluster_harvest(self, by_subcluster: Mapping[str, float]) -> None:
        for name, vcores in by_subcluster.items():
            self.subcluster_harvested.labels(name).set(vcores)

    def record_rows_written(self, table: str, n: int) -> None:
        self.store_rows_written.labels(table).inc(n)

    def record_rows_pruned(self, table: str, n: int) -> None:
        self.store_rows_pruned.labels(table).inc(n)

    def record_grpc(self, method: str, code: str, seconds: float) -> None:
        self.grpc_requests.labels(method, code).inc()
        self.grpc_seconds.labels(method).observe(seconds)

    def _set_series(self, gauge: Gauge, values: Mapping[str, float]) -> None:
        """One child per key set to its value; children of keys no longer listed are removed.
        Children are kept between calls: a guard tick sets thousands, `labels()` is slow."""
        children = self._children.setdefault(id(gauge), {})
        last = self._values.setdefault(id(gauge), {})
        if len(children) != len(values) or children.keys() != values.keys():
            for gone in children.keys() - values.keys():
                gauge.remove(gone)
                del children[gone]
                last.pop(gone, None)
        for key, value in values.items():
            if last.get(key) == value:
                continue  # a guard tick changes few of thousands: skip the unchanged
            child = children.get(key)
            if child is None:
                child = children[key] = gauge.labels(key)
            child.set(value)
            last[key] = value

    def record_harvest(self, by_node: Mapping[str, int], by_class: Mapping[str, int]) -> None:
        """Capacity given to YARN after a guard decision; nodes/classes not listed are dropped."""
        self._set_series(self.harvest_node_vcores, by_node)
        self._set_series(self.harvest_class_vcores, by_class)
        per: dict[str, float] = {}
        for node, vcores in by_node.items():
            name, sep, _ = node.partition("/")  # a sub-cluster's node: name/host:port (harvester/subclusters.py)
            if sep:
                per[name] = per.get(name, 0.0) + vcores
        if per or self._subcluster_states:
            self.record_subcluster_harvest({**{n: 0.0 for n in self._subcluster_states}, **per})

    def record_reserves(self, by_class: Mapping[str, float]) -> None:
        self.harvest_reserve.clear()
        for class_id, fraction in by_class.items():
            self.harvest_reserve.labels(class_id).set(fraction)

    def record_rises(self, by_class: Mapping[str, tuple[int, int]]) -> None:
        """Primary rises per class of one guard decision: (rises, absorbed)."""
        for class_id, (rises, absorbed) in by_class.items():
            if absorbed:
                self.harvest_primary_rises.labels(class_id, "absorbed").inc(absorbed)
            if rises - absorbed:
                self.harvest_primary_rises.labels(class_id, "killed").inc(rises - absorbed)

    def record_am_kills(self, by_reason: Mapping[str, int]) -> None:
        for reason, n in by_reason.items():
            self.harvest_am_kills.labels(reason).inc(n)

    def record_kills(self, by_reason: Mapping[str, int]) -> None:
        for reason, n in by_reason.items():
            self.harvest_kills.labels(reason).inc(n)

    def record_capacity_outcomes(self, counts: Mapping[str, int]) -> None:
        """`counts` by "<outcome>:<reason>" (GuardDecision.outcomes()); stale ones also set the stale gauge."""
        self.harvest_stale_nodes.clear()
        for key, n in counts.items():
            outcome, _, reason = key.partition(":")
            self.harvest_capacity_updates.labels(outcome, reason).inc(n)
            if outcome == "stale":
                self.harvest_stale_nodes.labels(reason).set(n)

    def record_action_errors(self, by_action: Mapping[str, int]) -> None:
        for action, n in by_action.items():
            self.harvest_action_errors.labels(action).inc(n)

    def record_admin_request(self, route: str, method: str, code: int) -> None:
        self.admin_requests.labels(route, method, str(code)).inc()

    def record_admin_refused(self, why: str) -> None:
        self.admin_refused.labels(why).inc()

    def set_admin_connections(self, n: int) -> None:
        self.admin_connections.set(n)

    def record_action_outcome(self, action: str, outcome: str) -> None:
        self.action_outcomes.labels(action, outcome).inc()

    def record_decision(self, decision: str, seconds: float) -> None:
        self.harvest_decision_seconds.labels(decision).observe(seconds)

    def record_class_model(self, version: int, classes_by_pattern: Mapping[str, int], tenants_by_pattern: Mapping[str, int]) -> None:
        self.harvest_model_version.set(version)
        for pattern, n in classes_by_pattern.items():
            self.harvest_classes.labels(pattern).set(n)
        for pattern, n in tenants_by_pattern.items():
            self.harvest_tenants.labels(pattern).set(n)

    def record_hdfs_table(self, version: int, grid_version: int, listed: int, busy: int, unclassified: int,
                          kind: str) -> None:
        """A table version was published (`kind`: structural or soft) — or deferred (`kind` deferred)."""
        self.hdfs_publishes.labels(kind).inc()
        if kind == "deferred":
            return
        self.hdfs_table_version.set(version)
        self.hdfs_grid_version.set(grid_version)
        for state, n in (("listed", listed), ("busy", busy), ("unclassified", unclassified)):
            self.hdfs_datanodes.labels(state).set(n)

    def record_hdfs_reimages(self, n: int) -> None:
        self.hdfs_reimages.inc(n)

    def record_hdfs_waiters(self, face: str, delta: int) -> None:
        self.hdfs_waiters.labels(face).inc(delta)

    def record_advice_waiters(self, document: str, delta: int) -> None:
        self.advice_waiters.labels(document).inc(delta)

    def record_node_ordering(self, version: int, advised: Mapping[str, int]) -> None:
        self.node_ordering_version.set(version)
        for job_type, n in advised.items():
            self.node_ordering_advised.labels(job_type).set(n)

    def record_placements(self, by_outcome: Mapping[str, int], seconds: float) -> None:
        self.placement_seconds.observe(seconds)
        for outcome, n in by_outcome.items():
            if n:
                self.placement_tasks.labels(outcome).inc(n)

    def record_morpheus_jobs(self, by_status: Mapping[str, int]) -> None:
        for status, n in by_status.items():
            self.morpheus_jobs.labels(status).set(n)

    def record_morpheus_reservations(self, by_state: Mapping[str, int], peak_cost: float | None) -> None:
        self._set_series(self.morpheus_reservations, by_state)
        if peak_cost is not None:
            self.morpheus_plan_peak.set(peak_cost)

    def record_reservation_actions(self, by_kind_outcome: Mapping[tuple[str, str], int]) -> None:
        for (kind, outcome), n in by_kind_outcome.items():
            self.morpheus_reservation_actions.labels(kind, outcome).inc(n)

    def record_dra_grants(self, n: int) -> None:
        self.morpheus_dra_grants.inc(n)

    def record_nudge(self, outcome: str) -> None:
        self.morpheus_nudges.labels(outcome).inc()

    def record_provenance(self, source: str, events: int, problems: int) -> None:
        self.morpheus_provenance_events.labels(source).inc(events)
        self.morpheus_provenance_problems.labels(source).inc(problems)

    def exposition(self) -> bytes:
        """The registry in Prometheus text format."""
        return generate_latest(self.registry)

    def record_jockey(self, jobs: Sequence[Any]) -> None:
        """One control tick's jobs (board/jockey.JobControl): series of jobs not running are removed."""
        self._set_series(self.jockey_jobs, dict(Counter_(j.state for j in jobs)))
        for g in (self.jockey_progress, self.jockey_containers, self.jockey_finish, self.jockey_deadline,
                  self.jockey_elapsed):
            g.clear()
        for j in jobs:
            if j.progress is None:
                continue
            self.jockey_progress.labels(j.job).set(j.progress)
            for kind, v in (("current", j.allocation), ("decided", j.decided), ("target", j.target)):
                if v is not None:
                    self.jockey_containers.labels(j.job, kind).set(v)
            for at, v in (("decided", j.predicted_finish_s), ("current", j.predicted_finish_current_s)):
                if v is not None:
                    self.jockey_finish.labels(j.job, at).set(v)
            if j.utility is not None:
                self.jockey_deadline.labels(j.job).set(j.utility.deadline_s)
            if j.elapsed_s is not None:
                self.jockey_elapsed.labels(j.job).set(j.elapsed_s)
            if j.rule:
                self.jockey_decisions.labels(j.job, j.rule).inc()

    def record_jockey_updates(self, by_outcome: Mapping[str, int]) -> None:
        for outcome, n in by_outcome.items():
            self.jockey_updates.labels(outcome).inc(n)
