"""Scenario files: one YAML file describing a simulation, validated into typed settings.

A bad file never produces a traceback: `load_scenario` raises `ScenarioError` whose `str()` is
ONE line naming the key and the problem (the CLI exits 2 with it), as harvester/config.py
does for settings. docs/simulator.md documents every key; deploy/scenarios/ has examples.
Relative trace paths resolve against `--traces DIR`, else $HARVESTER_TRACES_DIR, else the
scenario file's folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harvester.sim.tenants import DEFAULT_MIX, PATTERNS
from harvester.textfile import read_text


class ScenarioError(Exception):
    """A scenario problem, rendered as one line: `<file>: <key>: <problem>`."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TraceRef(_Spec):
    format: str = Field(description="Trace format name (harvester.sim.traces: bitbrains, alibaba-2018-dags, ...).")
    path: str = Field(description="File path; relative paths resolve against --traces / $HARVESTER_TRACES_DIR.")
    limit: int | None = Field(None, ge=1, description="Read at most this many rows.")
    options: dict[str, Any] = Field(default_factory=dict, description="Loader keyword options (e.g. max_tasks_per_stage).")


class ClusterSpec(_Spec):
    servers: int = Field(200, ge=1, le=200_000, description="Number of servers (NodeManagers).")
    cores: int = Field(16, ge=1, description="Physical cores per server.")
    vcores_per_core: float = Field(1.0, gt=0, description="YARN vcores per physical core (NM vcores = cores x this).")
    memory_mb: int = Field(131072, ge=1024, description="Memory per server (MB).")
    primary_memory_fraction: float = Field(0.25, ge=0, lt=1, description="Memory the primary tenant holds (constant).")
    rack_size: int = Field(40, ge=1, description="Servers per rack when no racks trace is given.")
    racks_trace: TraceRef | None = Field(None, description="alibaba-machine-meta file: real failure domains become racks.")


class NoiseSpec(_Spec):
    sigma: float = Field(0.0, ge=0, le=1, description="Relative sd of each server's primary CPU around its trace value, redrawn every step_s (0: the trace's step function).")
    step_s: float = Field(60.0, gt=0, description="How often the within-sample variation is redrawn (s); divides the scenario's step_s.")


class TenantSpec(_Spec):
    source: Literal["generator", "traces"] = Field("generator", description="generator: fitted patterns; traces: real series.")
    count: int | None = Field(None, ge=1, description="Number of primary tenants (default: servers / 20).")
    size_sigma: float = Field(1.0, ge=0, description="Lognormal sigma of tenant sizes.")
    mix: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_MIX), description="Share of SERVERS per pattern.")
    members: int = Field(4, ge=1, description="Distinct series per tenant (servers cycle through them).")
    phase_jitter_s: float = Field(600.0, ge=0, description="Per-server time shift, uniform in +/- this.")
    history_s: float = Field(86400.0, ge=0, description="Utilization history before t=0 that policies can read.")
    mean_utilization: dict[str, float] | None = Field(None, description="Bring each pattern's servers to this mean utilization over the run (affine, never clipped; a run that misses it by more than 5 points fails).")
    utilization_scale: float = Field(1.0, gt=0, description="Multiply every series (then clip to [0, 1]).")
    patterns_file: str | None = Field(None, description="Fitted pattern parameters (default: the shipped patterns.json).")
    traces: list[TraceRef] = Field(default_factory=list, description="Utilization traces (source: traces).")
    noise: NoiseSpec = Field(default_factory=NoiseSpec, description="Variation of the primary within a trace sample.")
    allow_generated: bool = Field(False, description="source traces: allow tenants from fitted generators when a pattern has no real series (else an error).")

    @field_validator("mix", "mean_utilization")
    @classmethod
    def _patterns(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is None:
            return v
        unknown = sorted(set(v) - set(PATTERNS))
        if unknown:
            raise ValueError(f"unknown pattern(s) {', '.join(unknown)} (use {', '.join(PATTERNS)})")
        if any(x < 0 or x > 1 for x in v.values()):
            raise ValueError("values must be in [0, 1]")
        return v

    @model_validator(mode="after")
    def _check(self) -> TenantSpec:
        if abs(sum(self.mix.values()) - 1.0) > 0.01:
            raise ValueError(f"tenants.mix: shares must sum to 1 (got {sum(self.mix.values()):g})")
        if self.source == "traces" and not self.traces:
            raise ValueError("tenants.traces: missing value (required when tenants.source is traces)")
        return self


class ReimageSpec(_Spec):
    enabled: bool = Field(False, description="Generate disk reimages (servers down, containers lost).")
    generator: str = Field("harvester.sim.reimage:osdi16_reimages",
                           description="package.module:callable (default: hdfs_placement's OSDI'16 §3.3 generator).")
    downtime_s: float = Field(1800.0, ge=0, description="How long a reimaged server is down.")
    params: dict[str, Any] = Field(default_factory=dict, description="Keyword parameters of the generator.")


class SyntheticSpec(_Spec):
    jobs: int = Field(500, ge=0, description="Job runs over the duration.")
    recurring_fraction: float = Field(0.6, ge=0, le=1, description="Share of runs from recurring jobs (Morpheus §2).")
    periods_s: dict[float, float] | None = Field(None, description="Recurrence period (s) -> weight.")
    run_to_run_sigma: float = Field(0.1, ge=0, description="Lognormal sigma of a recurring job's run-to-run variation.")
    max_tasks_per_stage: int | None = Field(200, ge=1, description="Cap on tasks per stage.")
    params_file: str | None = Field(None, description="Fitted workload parameters (default: the shipped workload.json).")


class WorkloadSpec(_Spec):
    source: Literal["synthetic", "trace"] = Field("synthetic", description="synthetic (fitted generator) or trace.")
    synthetic: SyntheticSpec = Field(default_factory=SyntheticSpec, description="Synthetic generator settings.")
    trace: TraceRef | None = Field(None, description="Job trace (source: trace).")
    time_offset_s: float = Field(0.0, ge=0, description="Skip this much of the trace's start.")
    time_scale: float = Field(1.0, gt=0, description="Multiply trace submit times (< 1 compresses arrivals).")
    duration_scale: float = Field(1.0, gt=0, description="Multiply every task duration.")
    target_utilization: float | None = Field(None, gt=0, le=2, description="Scale durations so batch demand = this x harvestable cores.")
    target_basis: Literal["harvestable", "offered", "cluster"] = Field("harvestable", description="What target_utilization is a share of: the cores the primary leaves free (harvestable), those minus offered_reserve (offered: what a guard offers), or all cores (cluster: the same jobs at every primary level).")
    offered_reserve: float = Field(0.10, ge=0, lt=1, description="Share of the cores a guard keeps in reserve, for target_basis offered.")
    size_by: Literal["durations", "jobs"] = Field("durations", description="How target_utilization is met: scale task durations, or (synthetic only) draw as many jobs as needed.")
    allow_rescaled_durations: bool = Field(False, description="Trace workloads: allow duration_scale / target_utilization to change the trace's task durations (else an error).")
    allow_dropped_jobs: bool = Field(False, description="Trace workloads: allow jobs outside the run's window to be dropped (else an error).")
    task_cpu_fraction: float = Field(1.0, gt=0, le=1, description="Share of its vcores a running task burns.")

    @model_validator(mode="after")
    def _check(self) -> WorkloadSpec:
        if self.source == "trace" and self.trace is None:
            raise ValueError("workload.trace: missing value (required when workload.source is trace)")
        return self


class PolicySpec(_Spec):
    name: str = Field("stock-yarn", description="stock-yarn, primary-aware, or package.module:factory.")
    params: dict[str, Any] = Field(default_factory=dict, description="Keyword parameters of the policy.")


class ControllerSpec(_Spec):
    factory: str = Field(description="package.module:factory building a Controller (its loops); harvester.sim.live:loops = Harvester's own.")
    period_s: float = Field(60.0, gt=0, description="Control period (Harvester's loops: the poll and guard period).")
    offset_s: float | None = Field(None, ge=0, description="Every loop's first tick at t = this (default: one period); e.g. a few seconds after each primary sample.")
    params: dict[str, Any] = Field(default_factory=dict, description="Keyword parameters of the factory.")
    include_containers: bool = Field(True, description="List containers in each snapshot.")


class SubstrateSpec(_Spec):
    reaction_delay_s: float | None = Field(None, ge=0, description="null: an overloaded server shares its cores and kills nothing; a number: the substrate kills the youngest containers this long after an overload (a primary-aware kill without a controller).")
    primary_weight: float | None = Field(1.0, gt=0, description="CPU weight of the primary's demand against batch on an oversubscribed server (1: per-process sharing as recorded, scenarios/cpu-contention; null: strict priority).")
    schedule_interval_s: float = Field(1.0, gt=0, description="Scheduling passes on this heartbeat grid (YARN: 1 s).")


class OutputSpec(_Spec):
    plots: bool = Field(True, description="Write PNG figures.")
    csv: bool = Field(True, description="Write jobs.csv, utilization.csv, tenants.csv.")


class Scenario(_Spec):
    name: str = Field(description="Scenario name (output folder, reports).")
    description: str = Field("", description="Free text.")
    seed: int = Field(0, ge=0, description="Seed of every random choice; same seed, same results.")
    duration_s: float = Field(gt=0, description="Simulated time jobs arrive in.")
    drain_s: float = Field(0.0, ge=0, description="Extra time for jobs to finish (no new arrivals).")
    step_s: float = Field(120.0, gt=0, description="Primary utilization sample interval (OSDI'16: 2 min).")
    start_time: float = Field(0.0, ge=0, description="Epoch seconds of t=0 (time of day for periodic tenants).")
    cluster: ClusterSpec = Field(default_factory=ClusterSpec, description="Servers.")
    tenants: TenantSpec = Field(default_factory=TenantSpec, description="Primary tenants.")
    reimage: ReimageSpec = Field(default_factory=ReimageSpec, description="Disk reimages.")
    workload: WorkloadSpec = Field(default_factory=WorkloadSpec, description="Batch jobs.")
    policy: PolicySpec = Field(default_factory=PolicySpec, description="Placement policy.")
    controller: ControllerSpec | None = Field(None, description="Optional controller: control loops ticked on simulated time.")
    substrate: SubstrateSpec = Field(default_factory=SubstrateSpec, description="YARN substrate timing.")
    outputs: OutputSpec = Field(default_factory=OutputSpec, description="What to write.")

    @model_validator(mode="after")
    def _count(self) -> Scenario:
        if self.tenants.count is not None and self.tenants.count > self.cluster.servers:
            raise ValueError(f"tenants.count: {self.tenants.count} tenants for {self.cluster.servers} servers")
        sub = self.step_s / self.tenants.noise.step_s
        if self.tenants.noise.sigma > 0 and (sub < 1 or abs(sub - round(sub)) > 1e-9):
            raise ValueError(f"tenants.noise.step_s: {self.tenants.noise.step_s:g} must divide step_s {self.step_s:g}")
        return self

    @property
    def substeps(self) -> int:
        """Primary updates per trace sample (the within-sample variation's steps)."""
        return int(round(self.step_s / self.tenants.noise.step_s)) if self.tenants.noise.sigma > 0 else 1

    @property
    def tenant_count(self) -> int:
        return self.tenants.count or max(1, self.cluster.servers // 20)


def _loc(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else ("." if i else "") + str(p) for i, p in enumerate(loc))


def _problem(err: Mapping[str, Any]) -> str:
    loc, kind = _loc(tuple(err["loc"])), err["type"]
    if kind == "extra_forbidden":
        return f"{loc}: unknown key"
    if kind == "missing":
        return f"{loc}: missing value"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set `a.b.c` in nested dicts (creating levels); used by --set and sweeps."""
    parts = dotted.split(".")
    node = data
    for p in parts[:-1]:
        nxt = node.get(p)
        if nxt is None:
            nxt = node[p] = {}
        if not isinstance(nxt, dict):
            raise ScenarioError(f"{dotted}: {p} is not a mapping")
        node = nxt
    node[parts[-1]] = value


def parse_scenario(data: Any, *, where: str = "scenario", overrides: Mapping[str, Any] | None = None) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: the top level must be a mapping, got {type(data).__name__}")
    for key, value in (overrides or {}).items():
        set_path(data, key, value)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{where}: " + "; ".join(_problem(e) for e in exc.errors())) from None


def read_yaml(path: str | Path) -> Any:
    p = Path(path)
    text = read_text(p, ScenarioError)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ScenarioError(f"{p}:{at}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None


def load_scenario(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Read and validate a scenario file; `overrides` maps dotted keys to values."""
    return parse_scenario(read_yaml(path), where=str(path), overrides=overrides)


def resolve_trace(path: str, *, key: str, traces_dir: str | Path | None, base_dir: str | Path | None) -> Path:
    """Where a trace path points (see the module docstring); ScenarioError naming `key` if missing."""
    p = Path(path)
    candidates = [p] if p.is_absolute() else []
    if not p.is_absolute():
        root = traces_dir or os.environ.get("HARVESTER_TRACES_DIR")
        candidates = [Path(root) / p] if root else []
        if base_dir is not None:
            candidates.append(Path(base_dir) / p)
        candidates.append(p)
    for c in candidates:
        if c.is_file():
            return c
    raise ScenarioError(f"{key}: no such trace file {path!r} (looked in {', '.join(str(c.parent) for c in candidates)}; "
                        "pass --traces DIR)")
