"""`harvester whatif` against what happened: an emulated week, then whatif's guard-only run (issue 28).

    nice .venv/bin/python bench/whatif_validation.py [--days 7] [--seed 0] [--keep DIR]

The sidecar serves the embedded demo emulator for `--days` simulated days on one stepped clock
(harvester/emulated_week.py: real HTTP, 300-s poll and guard periods, the emulator's 10-s monitor
grid); the emulator's container records give the truth (harvested core-hours: the capacity
granted to batch tasks that completed, in physical cores; task kills). Then
`run_whatif(<the week's store>, policies=yarn-pt)` replays the store and the figures are
compared: the issue's tolerances are ±10 % (harvested core-hours) and ±25 % (task kills).
Prints the figures and merges `whatif_validation_*` keys into bench/results/whatif.json.
tests/whatif/test_whatif_validation.py asserts the same comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "whatif.json"

from harvester.app import harvesting_settings  # noqa: E402
from harvester.config import load_settings  # noqa: E402
from harvester.emulated_week import run_emulated, week_settings  # noqa: E402
from harvester.whatif import run_whatif  # noqa: E402

METRICS = (("harvested_core_hours", 0.10), ("task_kills", 0.25), ("wasted_core_hours", None))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=float, default=7.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=None, help="keep the week's store, config, truth and report here")
    args = ap.parse_args()
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="harvester-whatif-validation-")
    where = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    cfg = week_settings(where / "week", seed=args.seed)
    t0 = time.perf_counter()
    week = run_emulated(cfg, args.days)
    week_s = time.perf_counter() - t0
    s = load_settings(cfg)
    t1 = time.perf_counter()
    report = run_whatif(week.store, harvesting=harvesting_settings(s), poll_interval_s=s.telemetry.poll_interval_s,
                        days=args.days, policies="yarn-pt", out=where / "whatif", processes=1, recommend=False)
    whatif_s = time.perf_counter() - t1
    got, truth = report["policies"]["yarn-pt"], week.truth.as_dict()
    rows = {}
    print(f"emulated {args.days:g} days (seed {args.seed}) in {week_s:.0f} s, whatif in {whatif_s:.0f} s "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"{'metric':<24} {'recorded':>12} {'whatif':>12} {'error':>8}  tolerance")
    for key, tol in METRICS:
        want, have = float(truth[key]), float(got[key])
        err = (have - want) / want if want else float("nan")
        rows[key] = {"recorded": want, "whatif": have, "relative_error": err, "tolerance": tol,
                     "within": None if tol is None else abs(err) <= tol}
        print(f"{key:<24} {want:>12,.1f} {have:>12,.1f} {err:>+8.1%}  {'-' if tol is None else f'±{tol:.0%}'}")
    print(f"kills by cause: recorded {truth['kills_by_cause']}, whatif {got.get('kills_by_cause')}")
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    doc["whatif_validation"] = {"days": args.days, "seed": args.seed, "metrics": rows, "truth": truth,
                                "week_wall_s": week_s, "whatif_wall_s": whatif_s, "load_1m": os.getloadavg()[0],
                                "command": "nice .venv/bin/python bench/whatif_validation.py"
                                           + (f" --days {args.days:g}" if args.days != 7.0 else "")
                                           + (f" --seed {args.seed}" if args.seed else "")}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(doc, indent=2) + "\n")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
