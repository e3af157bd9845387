"""The fitted state YARN-H decides from, kept for one simulation run (OSDI'16 §4.1; paper 004 §4).

This is the simulator's counterpart of the live refit loop plus `HarvestingState`: it calls
the real model and decision code and holds what they return, nothing else.

- **Classes** (`refit_if_due`): every `harvesting.refit_interval_s` of simulated time (default
  once a day, §4.1 "periodically (e.g., once per day)") the most recent `window_days` of each
  tenant's average-server utilization — the PAST-ONLY matrix the simulator hands out
  (`ClusterView.tenant_history`, `ControllerContext.tenant_history`) — goes to
  `models.utilization_classes.fit` (FFT patterns + k-means, tenants weighted by their node
  counts, as the live refit does) and `models.margins.fit_margins` (quantile of |Δu| per class,
  `harvesting.reserve.quantile`, default 0.95); `decisions.reserve.resolve_reserves` turns the
  margins into reserves (floor, cap, cold start).
- **Jobs** (`record_run`, `jobs`): every finished job becomes a `JobRun`; the job-history model
  (Algorithm 1 line 3: last run per recurring job, short/long thresholds) is refitted from all
  completed runs, with the live loop's own function (`loop.refit.job_history`), whenever new runs
  arrived and `jobs_refit_s` passed. The live loop republishes it with each daily class refit;
  a simulated run starts without any job history, so waiting a day would make every job of the
  first day "medium" (§4.1's rule for unknown jobs) — hence the shorter period.
- **Classes now** (`publish_classes`): the guard publishes `decisions.class_view.class_states`
  after each decision, like the live guard tick; Algorithm 1 reads them.

Nodes are described to the decision code as `NodeStrategy`s built from the scenario (the
simulator knows each server's tenant and size, so the live resolver's tenant rules are not
needed): physical cores, the NodeManager's configured resources, and host memory = NM memory
(the simulated NodeManager offers the whole server, so memory is harvested like CPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from pydantic import ValidationError

from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.class_selection import ClassState
from harvester.decisions.reserve import ReserveTable, resolve_reserves
from harvester.decisions.strategy import NodeStrategy, class_params, reserve_policy
from harvester.domain import Resources
from harvester.loop.refit import job_history
from harvester.models.job_history import JobHistoryModel, JobRun
from harvester.models.margins import MarginModel, fit_margins
from harvester.models.tenant_series import TenantSeries
from harvester.models.utilization_classes import TenantClassModel, fit
from harvester.sim.policies import JobOutcome, SimContext

DAY_S = 86400.0


def harvesting_settings(params: Mapping[str, Any] | None, step_s: float) -> HarvestingSettings:
    """The `harvesting:` section of the live config (same schema, same defaults) for a run.

    `sample_step_s` defaults to the scenario's `step_s`; any other value is refused because the
    history matrix is on the scenario's grid.
    """
    data = dict(params or {})
    data.setdefault("sample_step_s", step_s)
    try:
        h = HarvestingSettings.model_validate(data)
    except ValidationError as exc:
        raise ValueError("harvesting: " + "; ".join(
            f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())) from None
    if not math.isclose(h.sample_step_s, step_s):
        raise ValueError(f"harvesting.sample_step_s {h.sample_step_s:g} must equal the scenario's step_s {step_s:g}")
    return h


def node_strategies(context: SimContext) -> dict[str, NodeStrategy]:
    """One resolved node per simulated server (module docstring)."""
    out: dict[str, NodeStrategy] = {}
    names = [t.name for t in context.tenants]
    envs = [t.environment for t in context.tenants]
    for i, (nid, t) in enumerate(zip(context.node_ids, context.tenant_of.tolist())):
        mem = int(context.total_memory_mb[i])
        out[nid] = NodeStrategy(nid, nid.rsplit(":", 1)[0], names[t], envs[t], float(context.physical_cores[i]),
                                Resources(mem, int(context.total_vcores[i])), mem)
    return out


@dataclass(frozen=True)
class Fitted:
    """One refit's output: the class model, its margins and reserves, and each node's class."""

    model: TenantClassModel
    margins: MarginModel
    reserves: ReserveTable
    class_ids: tuple[str, ...]
    class_of_node: np.ndarray   # index into class_ids per node, -1 when the tenant has no class


class HarvestModels:
    """Refit classes and jobs; hold what the guard published (module docstring)."""

    def __init__(self, context: SimContext, settings: HarvestingSettings, *, jobs_refit_s: float = 120.0) -> None:
        if jobs_refit_s < 0:
            raise ValueError(f"jobs_refit_s must be >= 0, got {jobs_refit_s}")
        self.context = context
        self.settings = settings
        self.jobs_refit_s = jobs_refit_s
        self.nodes = node_strategies(context)
        self.tenant_names = tuple(t.name for t in context.tenants)
        self.node_counts = {t.name: float(t.servers) for t in context.tenants}
        self.fitted: Fitted | None = None
        self.classes: tuple[ClassState, ...] = ()
        self.classes_at: float | None = None
        self.refits: list[tuple[float, int, int]] = []  # (time, version, classes)
        self._runs: list[JobRun] = []
        self._jobs = JobHistoryModel(None)
        self._jobs_at = -math.inf
        self._jobs_runs = 0
        self.guard_attached = False

    # --- classes --------------------------------------------------------------------------

    def refit_if_due(self, now: float, history: np.ndarray) -> bool:
        """Fit classes, margins and reserves when none exist or the last is a period old."""
        h = self.settings
        if self.fitted is not None and now - self.fitted.model.fitted_at < h.refit_interval_s:
            return False
        width = min(history.shape[1], int(round(h.window_days * DAY_S / h.sample_step_s)))
        if width == 0:
            return False
        step = h.sample_step_s
        # the last column is the sample of the current step: the window ends after it
        series = TenantSeries(self.tenant_names, np.asarray(history[:, -width:]), step, now + step - width * step)
        version = 1 if self.fitted is None else self.fitted.model.version + 1
        model = fit(series, version=version, fitted_at=now, params=class_params(h), tenant_weights=self.node_counts)
        margins = fit_margins(series, model.tenant_class_map(), quantile=h.reserve.quantile, version=version,
                              fitted_at=now)
        class_ids = tuple(c.class_id for c in model.classes)
        reserves = resolve_reserves(margins, class_ids, reserve_policy(h))
        index = {cid: i for i, cid in enumerate(class_ids)}
        tenant_class = model.tenant_class_map()
        per_tenant = np.array([index.get(tenant_class.get(name, ""), -1) for name in self.tenant_names], dtype=np.int64)
        self.fitted = Fitted(model, margins, reserves, class_ids, per_tenant[self.context.tenant_of])
        self.classes, self.classes_at = (), None  # states of the old classes no longer apply
        self.refits.append((now, version, len(class_ids)))
        return True

    def publish_classes(self, classes: tuple[ClassState, ...], now: float) -> None:
        self.classes = classes
        self.classes_at = now

    # --- jobs -----------------------------------------------------------------------------

    def record_run(self, outcome: JobOutcome) -> None:
        """A finished job: its run from submission to finish (the paper's job execution time)."""
        self._runs.append(JobRun(outcome.job_name, outcome.job_id, outcome.submitted_at, outcome.finished_at))

    def jobs(self, now: float) -> JobHistoryModel:
        """The job-history model, refitted when new runs came in and `jobs_refit_s` passed."""
        if len(self._runs) != self._jobs_runs and now - self._jobs_at >= self.jobs_refit_s:
            model = self.fitted.model if self.fitted is not None else None
            self._jobs = job_history(self._runs, self.settings, model, self.nodes)
            self._jobs_at, self._jobs_runs = now, len(self._runs)
        return self._jobs
