"""Benchmark of the refit's read of the model window: tenant slots → tenants × slots matrix (issue 29).

    nice .venv/bin/python bench/refit_read.py [--tenants 500] [--days 30] [--keep DIR]

A SQLite store with `--tenants` tenants × `--days` days of 2-minute slots (built untimed through
`add_tenant_slots`, as the sidecar writes them), then each read in a fresh child process (so its
peak RSS is its own): `streamed` — what the refit does (`HistoryStore.read_tenant_slots` into
`series_from_rows`, rows turned into arrays 65,536 at a time) — and `objects`, the earlier
path (`tenant_slots` as one TenantSlot per row, then `series_from_slots`). Both must give the
same matrix (checked: NaN count and sum). Writes bench/results/refit_read.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "refit_read.json"
STEP = 120.0
START = 1_790_000_000.0 - 1_790_000_000.0 % 86400


def build(path: Path, tenants: int, days: int) -> None:
    import numpy as np

    from harvester.history.sqlite import SqliteHistoryStore
    from harvester.models.tenant_slots import TenantSlot

    store, rng = SqliteHistoryStore(path), np.random.default_rng(1)
    slots = int(days * 86400 / STEP)
    for k in range(0, slots, 720):  # a day at a time
        store.add_tenant_slots([TenantSlot(f"tenant-{i:05d}", START + j * STEP, float(rng.uniform()), 1, 20)
                                for j in range(k, min(slots, k + 720)) for i in range(tenants)])
    store.close()


def read(path: Path, days: int, how: str) -> dict[str, float]:
    import numpy as np

    from harvester.history.sqlite import SqliteHistoryStore
    from harvester.models.tenant_slots import series_from_rows, series_from_slots

    store, end = SqliteHistoryStore(path), START + days * 86400
    t0 = time.perf_counter()
    if how == "streamed":
        series, _, rows = store.read_tenant_slots(lambda r: series_from_rows(r, start=START, end=end, step_s=STEP),
                                                  since=START, until=end)
    else:
        slots = store.tenant_slots(since=START, until=end)
        series, _ = series_from_slots(slots, start=START, end=end, step_s=STEP)
        rows = len(slots)
    wall = time.perf_counter() - t0
    return {"seconds": round(wall, 2), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0),
            "rows": rows, "nan": int(np.isnan(series.matrix).sum()), "sum": float(np.nansum(series.matrix))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tenants", type=int, default=500)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--keep", type=Path, default=None, help="keep (and reuse) the store in this folder")
    ap.add_argument("--one", nargs=3, metavar=("STORE", "DAYS", "HOW"), help=argparse.SUPPRESS)  # the child
    args = ap.parse_args()
    if args.one:
        print(json.dumps(read(Path(args.one[0]), int(args.one[1]), args.one[2])))
        return 0
    folder = args.keep or Path(tempfile.mkdtemp(prefix="harvester-refit-read-"))
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / f"slots-{args.tenants}x{args.days}d.db"
    if not store.exists():
        t0 = time.perf_counter()
        build(store, args.tenants, args.days)
        print(f"store: {args.tenants} tenants x {args.days} days in {time.perf_counter() - t0:.0f} s "
              f"({store.stat().st_size / 1e6:.0f} MB)", flush=True)
    figures: dict[str, object] = {}
    for how in ("streamed", "objects"):
        out = subprocess.run([sys.executable, __file__, "--one", str(store), str(args.days), how],
                             capture_output=True, text=True, check=True)
        got = json.loads(out.stdout)
        print(f"{how}: {got['seconds']} s, peak RSS {got['peak_rss_mb']:.0f} MB, {got['rows']:,} rows "
              f"(NaN {got['nan']}, sum {got['sum']:.6f}); load {os.getloadavg()[0]:.2f}", flush=True)
        figures[how] = got
    if figures["streamed"]["sum"] != figures["objects"]["sum"] or figures["streamed"]["nan"] != figures["objects"]["nan"]:
        print("the two reads differ", file=sys.stderr)
        return 1
    key = f"refit_read_{args.tenants}_tenants_{args.days}d"
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results.update({f"{key}_seconds": figures["streamed"]["seconds"], f"{key}_peak_rss_mb": figures["streamed"]["peak_rss_mb"],
                    f"{key}_objects_seconds": figures["objects"]["seconds"],
                    f"{key}_objects_peak_rss_mb": figures["objects"]["peak_rss_mb"],
                    f"{key}_load_avg": round(os.getloadavg()[0], 2),
                    "command": " ".join(["python", "bench/refit_read.py", *sys.argv[1:]])})
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
