"""The Phoenix premise dial (issue 27): gain against constraint pressure.

    .venv/bin/python bench/phoenix_dial.py [--traces ../shared/traces] [--shares 0.05,0.1,0.2,0.4,0.6,1.0]

The mechanism scenario (deploy/scenarios/mechanism-phoenix.yaml, harvester/sim/phoenix/mechanism.py)
with the share of workers satisfying its scarce constraint swept from the scenario's 5% up
(the share of short jobs carrying it fixed at the scenario's), then the same cluster and jobs
with the evaluation's Table II mix (the constraints the real-trace evaluation synthesizes).
Per point: constraint pressure (share of short jobs asking / share of workers satisfying, of the
scarcest dimension), Eagle-C p99 / Phoenix p99, Eagle-C p99 with / without constraints.
Merges `mechanism_dial` into bench/results/phoenix.json and draws docs/evaluation/img/phoenix-dial.png.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harvester.eval_paths import full_or_vendored_traces
from harvester.sim.phoenix.mechanism import MECHANISM_POLICIES, dial, load_scenario, run  # noqa: E402

POLICIES = (*MECHANISM_POLICIES, "Phoenix, Eagle's placement (S7)")


def real_traces(traces: Path) -> list[dict]:
    """The real-trace evaluation's runs (seed 1) as dial points: its constraints are the Table II mix."""
    from harvester.sim.phoenix.evaluate import Plan, run_plan
    from harvester.sim.phoenix.mechanism import table_ii_pressure

    rows = run_plan(Plan(traces_dir=traces, seeds=(1,), policies=("Eagle-C", "Eagle (no constraints)", "Phoenix")))
    by = {(r.trace, r.load, r.policy): r.short for r in rows}
    out = []
    for trace, load in sorted({(r.trace, r.load) for r in rows}):
        e, n, p = by[(trace, load, "Eagle-C")], by[(trace, load, "Eagle (no constraints)")], by[(trace, load, "Phoenix")]
        out.append({"trace": trace, "load": load, "seed": 1, "pressure": table_ii_pressure(),
                    "p99_ratio_vs_eagle_c": e["p99"] / p["p99"], "eagle_c_constraint_penalty": e["p99"] / n["p99"],
                    "eagle_c_p99_s": e["p99"], "phoenix_p99_s": p["p99"], "eagle_c_p50_s": e["p50"], "phoenix_p50_s": p["p50"]})
    return out


def plot(points: list[dict], real: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    sweep = [p for p in points if not p["table_ii"]]
    xs = [p["pressure"] for p in sweep]
    ax.plot(xs, [p["p99_ratio_vs_eagle_c"] for p in sweep], "o-", label="Eagle-C p99 / Phoenix p99")
    ax.plot(xs, [p["p99_ratio_vs_eagle_c_s7"] for p in sweep], "s--", label="... Phoenix with Eagle's placement (S7)")
    ax.plot(xs, [p["eagle_c_constraint_penalty"] for p in sweep], "^:", label="Eagle-C p99 with / without constraints")
    t2 = [p for p in points if p["table_ii"]]
    if t2:
        ax.plot([t2[0]["pressure"]], [t2[0]["p99_ratio_vs_eagle_c"]], "k*", ms=12, label="Table II mix (real-trace evaluation's)")
    for r in real:
        ax.plot([r["pressure"]], [r["p99_ratio_vs_eagle_c"]], "kx", ms=8)
    if real:
        ax.plot([], [], "kx", label="Yahoo YH1/YH2, 15,000 workers, seed 1")
    ax.axhline(1.9, color="grey", lw=0.8, ls="--")
    ax.axhline(1.0, color="grey", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("constraint pressure: share of short jobs asking / share of workers satisfying")
    ax.set_ylabel("p99 ratio")
    ax.set_title("Phoenix premise dial (mechanism scenario, 1,500 workers)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, default=full_or_vendored_traces(ROOT))
    ap.add_argument("--shares", default="0.05,0.1,0.2,0.4,0.6,1.0")
    ap.add_argument("--real-traces", action="store_true",
                    help="also place the Yahoo sub-traces on the dial: Eagle-C, Eagle (no constraints) and Phoenix on "
                         "15,000 workers, loads 1.5 and 3, seed 1 (12 runs, a few minutes)")
    args = ap.parse_args()
    m = load_scenario()
    start = time.perf_counter()
    points = dial(m, args.traces, tuple(float(x) for x in args.shares.split(",")), POLICIES)
    points.append(run(m, args.traces, POLICIES, table_ii=True))
    for p in points:
        p["p99_ratio_vs_eagle_c_s7"] = p["Eagle-C"]["p99"] / p["Phoenix, Eagle's placement (S7)"]["p99"]
        print(f"pressure {p['pressure']:7.3f} ({'Table II mix' if p['table_ii'] else 'workers ' + format(p['worker_share'], '.2f')}):"
              f" Eagle-C/Phoenix p99 {p['p99_ratio_vs_eagle_c']:.2f} (S7 placement {p['p99_ratio_vs_eagle_c_s7']:.2f}),"
              f" Eagle-C constraint penalty {p['eagle_c_constraint_penalty']:.2f}")
    real = real_traces(args.traces) if args.real_traces else []
    for r in real:
        print(f"{r['trace']} load {r['load']:g}: pressure {r['pressure']:.3f}, Eagle-C/Phoenix p99 {r['p99_ratio_vs_eagle_c']:.2f},"
              f" Eagle-C constraint penalty {r['eagle_c_constraint_penalty']:.2f}")
    path = ROOT / "bench" / "results" / "phoenix.json"
    result = json.loads(path.read_text()) if path.exists() else {"name": "phoenix"}
    result["mechanism_dial"] = {"command": "python bench/phoenix_dial.py " + " ".join(sys.argv[1:]),
                                "seconds": time.perf_counter() - start, "points": points, "real_traces": real}
    path.write_text(json.dumps(result, indent=2) + "\n")
    plot(points, real, ROOT / "docs" / "evaluation" / "img" / "phoenix-dial.png")
    print(f"wrote {path.relative_to(ROOT)} and docs/evaluation/img/phoenix-dial.png")


if __name__ == "__main__":
    main()
