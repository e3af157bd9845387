"""Scenario → inputs of a run: primary load, workload, racks (each says where it came from).

Every builder records a one-line provenance in `sources` ("traces: bitbrains ...",
"synthetic: ... fitted to ...", "generator ...") that the summary prints, so every report says
which inputs were real traces and which were generators fitted to them (issue item 9).
"""

from __future__ import annotations

from pathlib import Path
import numpy as np

from harvester.sim.fit import load_patterns
from harvester.sim.scenario import Scenario, ScenarioError, resolve_trace
from harvester.sim.synthetic import WorkloadParams, generate_jobs, total_core_seconds
from harvester.sim.tenants.layout import PrimaryLoad, build_primary_load, trace_rows
from harvester.sim.traces import TraceError, load_alibaba_machine_meta, load_jobs, load_utilization
from harvester.sim.workload import JobSpec, scale_durations


def _file(path: str | None, key: str, base_dir: str | Path | None) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if not p.is_absolute() and base_dir is not None and (Path(base_dir) / p).is_file():
        p = Path(base_dir) / p
    if not p.is_file():
        raise ScenarioError(f"{key}: no such file {path!r}")
    return p


def build_load(sc: Scenario, rng: np.random.Generator, traces_dir: str | Path | None, base_dir: str | Path | None,
               sources: dict[str, str]) -> PrimaryLoad:
    t = sc.tenants
    pfile = _file(t.patterns_file, "tenants.patterns_file", base_dir)
    try:
        fits = load_patterns(pfile)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ScenarioError(f"tenants.patterns_file: cannot read fitted patterns ({exc})") from None
    rows = None
    if t.source == "traces":
        series = []
        for i, ref in enumerate(t.traces):
            path = resolve_trace(ref.path, key=f"tenants.traces[{i}].path", traces_dir=traces_dir, base_dir=base_dir)
            if ref.options:
                raise ScenarioError(f"tenants.traces[{i}].options: utilization loaders take no options")
            try:
                series += load_utilization(ref.format, path, ref.limit)
            except TraceError as exc:
                raise ScenarioError(f"tenants.traces[{i}]: {exc}") from None
        rows = trace_rows(series, sc.step_s, t.members, rng)
    try:
        load = build_primary_load(
            servers=sc.cluster.servers, tenants=sc.tenant_count, step_s=sc.step_s, horizon_s=sc.duration_s + sc.drain_s,
            history_s=t.history_s, start_s=sc.start_time, rng=rng, fits=fits, traces=rows, mix=t.mix,
            size_sigma=t.size_sigma, members=t.members, phase_jitter_s=t.phase_jitter_s,
            mean_utilization=t.mean_utilization, utilization_scale=t.utilization_scale)
    except ValueError as exc:
        raise ScenarioError(f"tenants: {exc}") from None
    from_traces = sum(1 for x in load.tenants if x.source.startswith("trace:"))
    fitted = f"generators fitted to {pfile or 'harvester/sim/data/patterns.json'} (Bitbrains Rnd + Alibaba 2018 machines)"
    if t.source == "traces":
        names = ", ".join(f"{r.format}:{Path(r.path).name}" for r in t.traces)
        sources["tenants"] = (f"{len(load.tenants)} tenants; {from_traces} from real series ({names}), "
                              f"{len(load.tenants) - from_traces} from {fitted}")
    else:
        sources["tenants"] = f"{len(load.tenants)} tenants from {fitted}"
    return load


def _retime(jobs: list[JobSpec], offset: float, scale: float, horizon: float) -> list[JobSpec]:
    out = []
    for j in jobs:
        t = (j.submit_s - offset) * scale
        if 0.0 <= t < horizon:
            out.append(JobSpec(j.job_id, t, j.stages, j.name, j.period_s, j.source, j.meta))
    return out


def build_workload(sc: Scenario, load: PrimaryLoad, rng: np.random.Generator, traces_dir: str | Path | None,
                   base_dir: str | Path | None, sources: dict[str, str], cores_per_vcore: float) -> list[JobSpec]:
    w = sc.workload
    if w.source == "synthetic":
        s = w.synthetic
        pfile = _file(s.params_file, "workload.synthetic.params_file", base_dir)
        try:
            params = WorkloadParams.load(pfile)
        except (OSError, ValueError, TypeError) as exc:
            raise ScenarioError(f"workload.synthetic.params_file: cannot read ({exc})") from None
        jobs = generate_jobs(params, jobs=s.jobs, horizon_s=sc.duration_s, rng=rng, recurring_fraction=s.recurring_fraction,
                             periods=s.periods_s, run_to_run_sigma=s.run_to_run_sigma,
                             max_tasks_per_stage=s.max_tasks_per_stage)
        sources["workload"] = (f"synthetic: {len(jobs)} job runs, DAG shapes fitted to {params.source}; "
                               f"recurrence {s.recurring_fraction:.0%} (assumed, Morpheus §2)")
    else:
        ref = w.trace
        assert ref is not None
        path = resolve_trace(ref.path, key="workload.trace.path", traces_dir=traces_dir, base_dir=base_dir)
        try:
            jobs = load_jobs(ref.format, path, ref.limit, **ref.options)
        except TraceError as exc:
            raise ScenarioError(f"workload.trace: {exc}") from None
        jobs = _retime(jobs, w.time_offset_s, w.time_scale, sc.duration_s)
        sources["workload"] = f"trace {ref.format}:{path.name} ({len(jobs)} jobs in the window)"
    if w.duration_scale != 1.0:
        jobs = scale_durations(jobs, w.duration_scale)
    if w.target_utilization is not None and jobs:
        cpu = cores_per_vcore * w.task_cpu_fraction
        share = 1.0 if w.target_basis == "cluster" else 1.0 - load.mean_utilization()
        basis = sc.cluster.servers * sc.cluster.cores * share * sc.duration_s
        factor = w.target_utilization * basis / total_core_seconds(jobs, cpu)
        jobs = scale_durations(jobs, factor)
        what = "all" if w.target_basis == "cluster" else "harvestable"
        sources["workload"] += f"; durations x{factor:.3g} for {w.target_utilization:.0%} of {what} cores"
    return jobs


def rack_names(sc: Scenario, traces_dir: str | Path | None, base_dir: str | Path | None) -> list[str]:
    """Rack per server: `rack_size` blocks, or real Alibaba failure domains cycled over servers."""
    n = sc.cluster.servers
    ref = sc.cluster.racks_trace
    if ref is None:
        return [f"/rack{i // sc.cluster.rack_size:04d}" for i in range(n)]
    if ref.format != "alibaba-machine-meta":
        raise ScenarioError("cluster.racks_trace.format: only alibaba-machine-meta carries failure domains")
    path = resolve_trace(ref.path, key="cluster.racks_trace.path", traces_dir=traces_dir, base_dir=base_dir)
    try:
        machines = load_alibaba_machine_meta(path, ref.limit)
    except TraceError as exc:
        raise ScenarioError(f"cluster.racks_trace: {exc}") from None
    return [f"/fd{machines[i % len(machines)].failure_domain_1}" for i in range(n)]

