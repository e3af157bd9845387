"""`run_whatif`: the history store → scenario → the simulator's runs → report (issue 28).

    report = run_whatif("~/.local/state/harvester/harvester.db", days=7, policies=("stock", "yarn-pt"),
                        out=Path("var/whatif/x"), processes=2)
    report["policies"]["yarn-pt"]["harvested_core_hours"]

Steps: read the store (recorded.py), build the inputs (inputs.py), run every YARN policy at the
current settings on a process pool (runs.py), then — for the guard's reserve — yarn-pt at the
neighbouring quantiles, the recommended quantile by the rule of verdicts.recommend_quantile, and
yarn-h at it; Morpheus (morpheus.py) and HDFS-H (hdfs.py) on their recorded inputs; the report
(report.py) writes `whatif.json`, `whatif.md` and figures into `out`.
"""

from __future__ import annotations

import pickle
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from harvester.config_harvesting import HarvestingSettings
from harvester.history.store import StoreError
from harvester.sim.live import FROM_SCENARIO
from harvester.whatif.inputs import build_inputs, scenario_data
from harvester.whatif.recorded import WhatifInputError, read_recorded
from harvester.whatif.runs import YARN, Deadline, RunSpec, run_all
from harvester.whatif.verdicts import candidate_quantiles, recommend_quantile

POLICIES = ("stock", "yarn-pt", "yarn-h", "fixed-reserve", "morpheus", "hdfs-h")
DEFAULT_DAYS = 7.0


def parse_policies(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """`a,b` (or a list) → known policy names in POLICIES order; WhatifInputError on an unknown one."""
    if text is None:
        return POLICIES
    items = [x.strip() for x in (text.split(",") if isinstance(text, str) else text) if x.strip()]
    bad = [x for x in items if x not in POLICIES]
    if bad or not items:
        raise WhatifInputError(f"--policies: unknown {', '.join(bad) or '(none given)'} (use {', '.join(POLICIES)})")
    return tuple(p for p in POLICIES if p in items)


def harvesting_params(h: HarvestingSettings, poll_interval_s: float) -> dict[str, Any]:
    """The operator's `harvesting:` section for the simulated loops: the keys the simulator sets
    from the cluster removed, and the reserve's reaction horizon pinned to the LIVE one (poll +
    RM lag + guard period: the replay ticks once per slot, which must not widen the reserve)."""
    data = h.model_dump(mode="json")
    for k in FROM_SCENARIO:
        data.pop(k, None)
    r = h.reserve
    data["reserve"]["horizon_s"] = r.horizon_s or (poll_interval_s + r.rm_lag_s + h.control_period_s)
    return data


def _deadlines(slos: Mapping[str, Any]) -> dict[str, Deadline]:
    out = {}
    for name, c in slos.items():
        t = c.accepted
        if t is None:
            continue
        o = c.override
        period = (o.period_s if o is not None and o.period_s is not None else t.period_s)
        due = (o.deadline_s if o is not None and o.deadline_s is not None else t.deadline_s)
        out[name] = Deadline(t.grid_origin_s, period, due)
    return out


def open_store_at(path: str | Path):  # type: ignore[no-untyped-def]
    """The SQLite store at `path`, refusing a missing file (SQLite would create an empty one)."""
    from harvester.history.sqlite import SqliteHistoryStore

    p = Path(path).expanduser()
    if not p.is_file():
        raise WhatifInputError(f"no history store at {p} (run the sidecar first: make run; or pass --store PATH)")
    try:
        return SqliteHistoryStore(str(p))
    except StoreError as exc:
        raise WhatifInputError(f"{p}: {exc}") from None


def run_whatif(store: str | Path, *, harvesting: HarvestingSettings | None = None, poll_interval_s: float = 10.0,
               days: float = DEFAULT_DAYS, policies: Sequence[str] | str | None = None, out: str | Path,
               processes: int = 2, recommend: bool = True, progress: Callable[[float, str], None] | None = None,
               clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """Run the what-if and write its report into `out`; returns the report as written to whatif.json.

    `harvesting`: the operator's section (default: the embedded default's, harvester/app.py);
    `poll_interval_s`: telemetry.poll_interval_s (the reserve's horizon)."""
    from harvester.whatif import hdfs, morpheus, report

    say = progress or (lambda f, s: None)
    chosen = parse_policies(policies)
    if days <= 0:
        raise WhatifInputError(f"--days: must be positive, got {days:g}")
    if harvesting is None:
        from harvester.app import harvesting_settings
        from harvester.config import load_settings

        harvesting = harvesting_settings(load_settings(None))
    started = clock()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    say(0.0, "reading the history store")
    st = open_store_at(store)
    try:
        rec = read_recorded(st, harvesting, days=days, progress=lambda f, s: say(0.1 * f, s))
    finally:
        st.close()
    given, cov = build_inputs(rec)
    if not given.jobs:
        raise WhatifInputError(f"the history store holds no finished job in the last {cov.replay_days:.2f} days "
                               "(job_runs): nothing to replay")
    say(0.1, "inputs built")
    base = scenario_data(given, rec, cov.drain_s, harvesting_params(harvesting, poll_interval_s),
                         period_s=rec.step_s)
    deadlines = _deadlines(rec.slos)
    yarn = [p for p in chosen if p in YARN]
    specs = [RunSpec(p) for p in yarn]
    current = harvesting.reserve.quantile
    tune = recommend and harvesting.reserve.method != "fixed" and any(p in ("yarn-pt", "yarn-h") for p in yarn)
    tried = [q for q in candidate_quantiles(current) if q != current] if tune else []
    specs += [RunSpec("yarn-pt", q) for q in tried]
    if tune and "yarn-pt" not in yarn:
        specs.append(RunSpec("yarn-pt"))
    extra = 1 if tune and "yarn-h" in yarn else 0
    total = len(specs) + extra + (1 if "morpheus" in chosen else 0) + (1 if "hdfs-h" in chosen else 0)
    finished = [0]

    def one_done(row: Mapping[str, Any]) -> None:
        finished[0] += 1
        say(0.1 + 0.85 * finished[0] / max(1, total), f"ran {row['label']}")

    inputs = out / ".whatif-inputs.pkl"
    with open(inputs, "wb") as f:
        pickle.dump(given, f, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        say(0.1, f"running {len(specs)} simulations on {processes} processes")
        rows = run_all(specs, base, deadlines, inputs, processes, one_done)
        recommendation = None
        if tune:
            by_q = {r["quantile"] if r["quantile"] is not None else current: r for r in rows if r["policy"] == "yarn-pt"}
            q, why = recommend_quantile(by_q, current)
            recommendation = {"current": current, "recommended": q, "rule": why, "tried": sorted(by_q)}
            if extra and q != current:
                rows += run_all([RunSpec("yarn-h", q)], base, deadlines, inputs, 1, one_done)
            elif extra:
                one_done({"label": "yarn-h (recommended = current)"})
    finally:
        inputs.unlink(missing_ok=True)
    extras: dict[str, Any] = {}
    if "morpheus" in chosen:
        say(0.1 + 0.85 * finished[0] / max(1, total), "Morpheus vs static allocations")
        extras["morpheus"] = morpheus.compare(rec)
        finished[0] += 1
    if "hdfs-h" in chosen:
        say(0.1 + 0.85 * finished[0] / max(1, total), "HDFS-H vs stock placement")
        extras["hdfs"] = hdfs.compare(rec, given)
        finished[0] += 1
    say(0.97, "writing the report")
    doc = report.build(rows, extras, cov, recommendation, chosen=chosen, days=days, store=str(store),
                       started=started, finished=clock(), harvesting=harvesting)
    report.write(doc, rows, out)
    say(1.0, "done")
    return doc
