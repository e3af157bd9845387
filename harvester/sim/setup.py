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
from harvester.sim.traces.identity import recurrence
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
            mean_utilization=t.mean_utilization, utilization_scale=t.utilization_scale,
            allow_generated=t.allow_generated)
    except ValueError as exc:
        raise ScenarioError(f"tenants: {exc}") from None
    from_traces = sum(1 for x in load.tenants if x.source.startswith("trace:"))
    if t.source == "traces" and from_traces < len(load.tenants):
        _deviation(sources, f"{len(load.tenants) - from_traces} of {len(load.tenants)} tenants from fitted generators "
                            "(tenants.allow_generated)")
    fitted = f"generators fitted to {pfile or 'harvester/sim/data/patterns.json'} (Bitbrains Rnd + Alibaba 2018 machines)"
    if t.source == "traces":
        names = ", ".join(f"{r.format}:{Path(r.path).name}" for r in t.traces)
        sources["tenants"] = (f"{len(load.tenants)} tenants; {from_traces} from real series ({names}), "
                              f"{len(load.tenants) - from_traces} from {fitted}")
    else:
        sources["tenants"] = f"{len(load.tenants)} tenants from {fitted}"
    return load


def _retime(jobs: list[JobSpec], offset: float, scale: float, horizon: float) -> tuple[list[JobSpec], int]:
    """The jobs inside the run's window (times shifted and scaled), and how many fell outside."""
    out = []
    for j in jobs:
        t = (j.submit_s - offset) * scale
        if 0.0 <= t < horizon:
            out.append(JobSpec(j.job_id, t, j.stages, j.name, j.period_s, j.source, j.meta))
    return out, len(jobs) - len(out)


def _deviation(sources: dict[str, str], text: str) -> None:
    """An input the run changed or replaced, allowed by a flag: listed at the top of reports."""
    sources["deviations"] = "; ".join(x for x in (sources.get("deviations"), text) if x)


def _basis_share(sc: Scenario, load: PrimaryLoad) -> float:
    w = sc.workload
    if w.target_basis == "cluster":
        return 1.0
    free = 1.0 - load.mean_utilization()
    return max(0.0, free - w.offered_reserve) if w.target_basis == "offered" else free


def _synthetic(sc: Scenario, rng: np.random.Generator, base_dir: str | Path | None, count: int | None = None
               ) -> tuple[list[JobSpec], WorkloadParams]:
    s = sc.workload.synthetic
    pfile = _file(s.params_file, "workload.synthetic.params_file", base_dir)
    try:
        params = WorkloadParams.load(pfile)
    except (OSError, ValueError, TypeError) as exc:
        raise ScenarioError(f"workload.synthetic.params_file: cannot read ({exc})") from None
    jobs = generate_jobs(params, jobs=s.jobs if count is None else count, horizon_s=sc.duration_s, rng=rng,
                         recurring_fraction=s.recurring_fraction, periods=s.periods_s,
                         run_to_run_sigma=s.run_to_run_sigma, max_tasks_per_stage=s.max_tasks_per_stage)
    return jobs, params


SIZING_DRAWS = 8        # draws at most when sizing by job count ...
SIZING_TOLERANCE = 0.05  # ... until the drawn work is this close to the target


def _size_by_jobs(sc: Scenario, rng: np.random.Generator, base_dir: str | Path | None, pilot: list[JobSpec],
                  want: float, cpu: float) -> tuple[list[JobSpec], str]:
    """Draw job sets until their work is within SIZING_TOLERANCE of `want` core-seconds (job sizes are
    heavy-tailed: one count can give twice the work of another draw); the closest draw is kept."""
    got = total_core_seconds(pilot, cpu)
    count = max(1, round(len(pilot) * want / got))
    best: tuple[float, list[JobSpec], float] | None = None
    for _ in range(SIZING_DRAWS):
        jobs, _params = _synthetic(sc, rng, base_dir, count)
        got = total_core_seconds(jobs, cpu)
        miss = abs(got / want - 1.0)
        if best is None or miss < best[0]:
            best = (miss, jobs, got)
        if miss <= SIZING_TOLERANCE:
            break
        count = max(1, round(count * want / got))
    assert best is not None
    _, jobs, got = best
    return jobs, f"{len(jobs):,} jobs, {got / 3600:,.0f} core-hours ({got / want:.0%} of the target)"


def build_workload(sc: Scenario, load: PrimaryLoad, rng: np.random.Generator, traces_dir: str | Path | None,
                   base_dir: str | Path | None, sources: dict[str, str], cores_per_vcore: float) -> list[JobSpec]:
    """The run's jobs. Sizing (`target_utilization`): batch demand = target × basis cores × duration,
    met by scaling durations (`size_by: durations`, an input change that needs
    `allow_rescaled_durations`) or, for the synthetic workload, by drawing as many jobs as it
    takes (`size_by: jobs`: a pilot draw of `synthetic.jobs` gives the core-seconds per job)."""
    w = sc.workload
    cpu = cores_per_vcore * w.task_cpu_fraction
    basis = sc.cluster.servers * sc.cluster.cores * _basis_share(sc, load) * sc.duration_s
    what = {"cluster": "all", "harvestable": "harvestable", "offered": "offered"}[w.target_basis]
    if w.source == "synthetic":
        s = w.synthetic
        jobs, params = _synthetic(sc, rng, base_dir)
        if w.target_utilization is not None and w.size_by == "jobs" and jobs:
            jobs, note = _size_by_jobs(sc, rng, base_dir, jobs, w.target_utilization * basis, cpu)
            sources["sizing"] = f"{note} for {w.target_utilization:.0%} of {what} cores"
        sources["workload"] = (f"synthetic: {len(jobs)} job runs, DAG shapes fitted to {params.source}; "
                               f"recurrence {s.recurring_fraction:.0%} of runs, run-to-run sigma {s.run_to_run_sigma:g} "
                               f"(assumed, Morpheus §2)")
    else:
        if w.size_by == "jobs":
            raise ScenarioError("workload.size_by: jobs needs the synthetic workload (a trace has the jobs it has)")
        ref = w.trace
        assert ref is not None
        path = resolve_trace(ref.path, key="workload.trace.path", traces_dir=traces_dir, base_dir=base_dir)
        try:
            jobs = load_jobs(ref.format, path, ref.limit, **ref.options)
        except TraceError as exc:
            raise ScenarioError(f"workload.trace: {exc}") from None
        jobs, dropped = _retime(jobs, w.time_offset_s, w.time_scale, sc.duration_s)
        if dropped:
            text = f"{dropped:,} of {dropped + len(jobs):,} trace jobs dropped (outside the run's {sc.duration_s:g} s window)"
            if not w.allow_dropped_jobs:
                raise ScenarioError(f"workload.trace: {text}; shorten the trace (limit, time_offset_s, time_scale) "
                                    f"or set workload.allow_dropped_jobs")
            _deviation(sources, text)
        sources["workload"] = (f"trace {ref.format}:{path.name} ({len(jobs)} jobs in the window; "
                               f"{recurrence(j.name for j in jobs).describe()})")
    factor = w.duration_scale
    if w.target_utilization is not None and jobs and w.size_by == "durations":
        factor *= w.target_utilization * basis / total_core_seconds(jobs, cpu) / w.duration_scale
    if factor != 1.0:
        text = f"task durations x{factor:.3g}" + (f" for {w.target_utilization:.0%} of {what} cores"
                                                  if w.target_utilization is not None else "")
        if not w.allow_rescaled_durations:
            raise ScenarioError(f"workload: {text} would change the workload's durations; size by jobs "
                                f"(workload.size_by: jobs) or set workload.allow_rescaled_durations")
        jobs = scale_durations(jobs, factor)
        _deviation(sources, text)
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

