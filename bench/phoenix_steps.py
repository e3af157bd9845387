"""The Phoenix fidelity review, step by step (docs/evaluation/phoenix-fidelity.md, S1-S7).

    nice .venv/bin/python bench/phoenix_steps.py [--traces ../shared/traces] [--seeds 1] [--loads 1.5,3]

The review's changes were committed one per step, in the order declared before measuring
(phoenix-fidelity.md). This runs `harvester evaluate phoenix` *at each step's commit*: the
commit's `harvester/` tree is exported with `git archive` into `--work` and the evaluation runs
from there (the generated gRPC modules are copied in), Eagle-C and Phoenix for the steps that
change both (the first review's model, S1-S4), Phoenix only for S5-S7 (Eagle-C carried from
the step before, as declared). A step's effect alone is its figure over the previous step's.

Steps are found by commit subject in `git log HEAD` ("Phoenix evaluation S<n>[a-c]: ..."; the
base is the commit that records the measured load, the first review's model). Results of a
step already in `--work` are reused with the commit they were measured at (delete the folder to
re-run). Writes bench/results/phoenix_steps.json, docs/evaluation/phoenix-steps-results.md and
docs/evaluation/img/phoenix-steps.png.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_SUBJECT = "Phoenix simulator: record the busy share"
STEP = re.compile(r"^Phoenix evaluation (S\d+[a-z]?): (.*)$")
PHOENIX_ONLY = ("S5", "S6", "S7")  # declared: S5-S7 change Phoenix only
PAPER_P99_RATIO = 1.9


@dataclass(frozen=True)
class Step:
    id: str        # "base", "S1", "S2a", ...
    commit: str
    subject: str

    @property
    def policies(self) -> tuple[str, ...]:
        return ("Phoenix",) if self.id in PHOENIX_ONLY else ("Eagle-C", "Phoenix")


def steps_from_log(lines: Sequence[str]) -> list[Step]:
    """The base and the S-steps, oldest first, from `git log --reverse --format=%H %s` lines.
    A step committed twice (a fix) keeps its last commit."""
    out: dict[str, Step] = {}
    for line in lines:
        commit, _, subject = line.partition(" ")
        if subject.startswith(BASE_SUBJECT) and not out:
            out["base"] = Step("base", commit, subject)
        elif (m := STEP.match(subject)) and "base" in out:
            out[m.group(1)] = Step(m.group(1), commit, m.group(2))
    if "base" not in out:
        raise ValueError(f"no commit {BASE_SUBJECT!r} in the log: the step history is not on this branch")
    return list(out.values())


def _geomean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else math.nan


def step_figures(rows: Sequence[dict], carried: Sequence[dict] = ()) -> dict[str, float]:
    """One step's figures from its result rows (`phoenix-results.json` "rows"); `carried` are the
    previous step's Eagle-C rows when this step did not re-run Eagle-C."""
    rows = list(rows) + [r for r in carried if not any(x["policy"] == "Eagle-C" for x in rows)]
    by = {(r["trace"], r["load"], r["seed"], r["policy"]): r for r in rows}
    ratios = [by[(t, ld, s, "Eagle-C")]["short"]["p99"] / r["short"]["p99"]
              for (t, ld, s, p), r in by.items() if p == "Phoenix" and (t, ld, s, "Eagle-C") in by]
    out = {"p99_ratio_vs_eagle_c": _geomean(ratios), "runs": float(len(ratios))}
    for p, key in (("Eagle-C", "eagle_c"), ("Phoenix", "phoenix")):
        mine = [r for r in rows if r["policy"] == p]
        for part, pct in (("short", "p50"), ("short", "p99"), ("constrained", "p99")):
            vals = [r[part][pct] for r in mine if isinstance(r[part][pct], (int, float)) and math.isfinite(r[part][pct])]
            out[f"{key}_{part}_{pct}_s"] = sum(vals) / len(vals) if vals else math.nan
        rel = [r.get("relaxed_jobs", 0) for r in mine]
        out[f"{key}_relaxed_jobs"] = sum(rel) / len(rel) if rel else math.nan
    return out


def _export(step: Step, work: Path) -> Path:
    tree = work / step.id / "tree"
    if not (tree / "harvester").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", step.commit, "harvester"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        for f in (ROOT / "harvester" / "v1").glob("*_pb2*.py"):  # generated, not committed
            shutil.copy2(f, tree / "harvester" / "v1" / f.name)
    return tree


def run_step(step: Step, work: Path, traces: Path, loads: str, seeds: str, limit: int | None = None) -> tuple[list[dict], str]:
    """The step's result rows and the commit they were measured at."""
    out = work / step.id / "out"
    results = out / "phoenix-results.json"
    measured = work / step.id / "commit.txt"
    if not results.is_file():
        tree = _export(step, work)
        cmd = [sys.executable, "-m", "harvester.cli_phoenix", "--traces", str(traces), "--loads", loads,
               "--seeds", seeds, "--out", str(out), "--quiet"] + [a for p in step.policies for a in ("--policy", p)] + (["--limit", str(limit)] if limit else [])
        env = {**os.environ, "PYTHONPATH": str(tree)}
        check = subprocess.run([sys.executable, "-c", "import harvester; print(harvester.__file__)"], cwd=tree, env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
        if not check.startswith(str(tree)):
            raise RuntimeError(f"{step.id}: harvester imported from {check}, not the exported tree {tree}")
        subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
        measured.write_text(step.commit + "\n")
    commit = measured.read_text().strip() if measured.is_file() else step.commit
    return json.loads(results.read_text())["rows"], commit


def table(steps: Sequence[Step], figs: dict[str, dict[str, float]]) -> str:
    out = ("| step | change (commit subject) | Eagle-C short p99 (s) | Phoenix short p99 (s) | Eagle-C p99 / Phoenix p99 "
           f"(paper {PAPER_P99_RATIO}) | this step alone: ratio x | Eagle-C p99 x | Phoenix p99 x |\n"
           "|---|---|---|---|---|---|---|---|\n")
    prev = None
    for s in steps:
        f = figs[s.id]
        alone = ["—"] * 3 if prev is None else [
            f"{f[k] / prev[k]:.2f}" for k in ("p99_ratio_vs_eagle_c", "eagle_c_short_p99_s", "phoenix_short_p99_s")]
        subject = s.subject if len(s.subject) <= 110 else s.subject[:107] + "..."
        out += (f"| {s.id} | {subject} | {f['eagle_c_short_p99_s']:.0f} | {f['phoenix_short_p99_s']:.0f} | "
                f"{f['p99_ratio_vs_eagle_c']:.2f} | {' | '.join(alone)} |\n")
        prev = f
    return out


def plot(steps: Sequence[Step], figs: dict[str, dict[str, float]], path: Path) -> Path:
    """Left: Eagle-C and Phoenix short-job p99 after each step. Right: their ratio beside the paper's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = [s.id for s in steps]
    x = list(range(len(ids)))
    fig, (ax, rx) = plt.subplots(1, 2, figsize=(12, 4))
    for key, label in (("eagle_c_short_p99_s", "Eagle-C"), ("phoenix_short_p99_s", "Phoenix")):
        ax.plot(x, [figs[i][key] for i in ids], marker="o", label=label)
    ax.set_yscale("log")
    ax.set_ylabel("short-job p99 (s), mean of the runs")
    ax.set_title("after each step (cumulative, declared order)")
    rx.plot(x, [figs[i]["p99_ratio_vs_eagle_c"] for i in ids], marker="o", label="ours")
    rx.axhline(PAPER_P99_RATIO, color="gray", linestyle="--", label=f"paper ({PAPER_P99_RATIO})")
    rx.set_ylabel("Eagle-C p99 / Phoenix p99")
    rx.set_ylim(0, 2.2)
    rx.set_title("ratio after each step")
    for a in (ax, rx):
        a.set_xticks(x, ids)
        a.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    ap.add_argument("--loads", default="1.5,3")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--limit", type=int, default=None, help="jobs per trace (a quick check of the machinery)")
    ap.add_argument("--work", type=Path, default=ROOT / "sim-out" / "phoenix-steps")
    args = ap.parse_args()
    log = subprocess.run(["git", "-C", str(ROOT), "log", "--reverse", "--format=%H %s", "HEAD"], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    steps = steps_from_log(log)
    figs: dict[str, dict[str, float]] = {}
    prev_rows: list[dict] = []
    measured: dict[str, str] = {}
    for s in steps:
        rows, measured[s.id] = run_step(s, args.work, args.traces.resolve(), args.loads, args.seeds, args.limit)
        figs[s.id] = step_figures(rows, [r for r in prev_rows if r["policy"] == "Eagle-C"])
        prev_rows = rows + [r for r in prev_rows if r["policy"] == "Eagle-C" and "Eagle-C" not in s.policies]
        print(f"{s.id}: Eagle-C/Phoenix p99 {figs[s.id]['p99_ratio_vs_eagle_c']:.3f}", flush=True)
    md = table(steps, figs)
    command = "python bench/phoenix_steps.py " + " ".join(sys.argv[1:])
    doc = {"name": "phoenix_steps", "command": command,
           "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
           "figures": {f"{s.id}_{k}": v for s in steps for k, v in figs[s.id].items()},
           "targets": {"p99_ratio_vs_eagle_c": PAPER_P99_RATIO},
           "steps": [{"id": s.id, "commit": s.commit, "measured_at": measured[s.id], "subject": s.subject,
                      "policies": list(s.policies)} for s in steps]}
    (ROOT / "bench" / "results" / "phoenix_steps.json").write_text(json.dumps(doc, indent=2) + "\n")
    png = plot(steps, figs, ROOT / "docs" / "evaluation" / "img" / "phoenix-steps.png")
    (ROOT / "docs" / "evaluation" / "phoenix-steps-results.md").write_text(
        "# Phoenix fidelity review — generated step table\n\n"
        f"Generated by `{command}` (loads {args.loads}, seeds {args.seeds}, 15,000 workers, both Yahoo sub-traces); "
        "each step is `harvester evaluate phoenix` at the step's commit. Times are means over the runs; the ratio is the "
        "geometric mean of the per-run ratios; \"this step alone\" divides a step's figure by the previous step's. "
        "The report is [phoenix.md](phoenix.md#fidelity-review); the decisions [phoenix-fidelity.md](phoenix-fidelity.md)."
        "\n\n" + md + f"\n![Eagle-C and Phoenix short-job p99 per step](img/{png.name})\n", encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
