"""The HDFS-H evaluation report: docs/evaluation/hdfs_grid.md, its figures and raw rows.

Everything in the report is computed from the rows `evaluate_hdfs.run_cells` returned, so
re-running the one command regenerates the same page (same seeds, same numbers). Zero
losses are reported with the rule-of-three bound: none in n blocks means a loss rate below
3/n at 95 % confidence — "0" alone would overstate what a finite run shows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from harvester.sim.evaluate_hdfs import POLICIES, Row, Setup, select

NAMES = {"grid": "HDFS-H grid", "stock": "Stock HDFS", "greedy": "Greedy best-first"}
COLORS = {"grid": "#1b9e77", "stock": "#d95f02", "greedy": "#7570b3"}


def _sum(rows: Sequence[Row], key: str) -> float:
    return float(sum(r[key] for r in rows))


def _per_million(lost: float, written: float) -> str:
    if written <= 0:
        return "—"
    if lost == 0:
        return f"0 (< {3e6 / written:.2g})"
    return f"{lost * 1e6 / written:.3g}"


def _ratio(stock: float, grid: float) -> str:
    if stock == 0 and grid == 0:
        return "no losses under either"
    if grid == 0:
        return f"≥ {stock:g}x (grid lost none, stock {stock:g})"
    return f"{stock / grid:.3g}x ({stock:g} vs {grid:g})"


def losses_table(rows: Sequence[Row], replications: Sequence[int]) -> tuple[str, dict[tuple[str, int], tuple[float, float]]]:
    """Markdown table R x policy of blocks lost (and per million written), summed over cells."""
    totals = {}
    lines = ["| R | " + " | ".join(NAMES[p] for p in POLICIES) + " |", "|---|" + "---|" * len(POLICIES)]
    for r in replications:
        cells = []
        for p in POLICIES:
            sel = select(rows, policy=p, replication=r)
            lost, written = _sum(sel, "blocks_lost"), _sum(sel, "blocks_written")
            totals[(p, r)] = (lost, written)
            cells.append(f"{lost:g} lost / {written:,.0f} ({_per_million(lost, written)} per M)")
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return "\n".join(lines), totals


def availability_table(rows: Sequence[Row], levels: Sequence[float], replication: int) -> tuple[str, dict]:
    """Markdown table level x policy: mean unavailable share of block-time and blocks ever unavailable."""
    out = {}
    lines = ["| mean primary CPU (achieved) | busy steps | " + " | ".join(NAMES[p] for p in POLICIES) + " |",
             "|---|---|" + "---|" * len(POLICIES)]
    for level in levels:
        sel = select(rows, level=level, replication=replication)
        if not sel:
            continue
        achieved = np.mean([r["achieved_mean_util"] for r in sel])
        busy = np.mean([r["busy_step_fraction"] for r in sel])
        cells = []
        for p in POLICIES:
            ps = select(sel, policy=p)
            frac = float(np.mean([r["unavailable_fraction"] for r in ps]))
            ever = _sum(ps, "blocks_ever_unavailable") / max(_sum(ps, "blocks_written"), 1)
            out[(level, p)] = frac
            cells.append(f"{frac:.2e} of block-time; {ever:.1%} of blocks ever")
        lines.append(f"| {level:.0%} ({achieved:.0%}) | {busy:.1%} | " + " | ".join(cells) + " |")
    return "\n".join(lines), out


def sensitivity_table(rows: Sequence[Row], base: Sequence[Row]) -> str:
    """Markdown table: each sensitivity value (and the base at the same level) x policy, R=2 and R=3."""
    lines = ["| study | value | R | " + " | ".join(NAMES[p] for p in POLICIES) + " |", "|---|---|---|" + "---|" * len(POLICIES)]
    groups: list[tuple[str, str, list[Row]]] = [("base", "15 min, default reimages, fill 60 %", base)]
    seen: list[tuple[str, str]] = []
    for r in rows:
        if (r["study"], r["value"]) not in seen:
            seen.append((r["study"], r["value"]))
    groups += [(s, v, select(rows, study=s, value=v)) for s, v in seen]
    for study, value, sel in groups:
        for rep in (2, 3):
            cells = []
            for p in POLICIES:
                ps = select(sel, policy=p, replication=rep)
                lost, written = _sum(ps, "blocks_lost"), _sum(ps, "blocks_written")
                cells.append(f"{lost:g} ({_per_million(lost, written)}/M)")
            lines.append(f"| {study} | {value} | {rep} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _figures(rows: Sequence[Row], sens: Sequence[Row], base_level: Sequence[Row], setup: Setup, levels: Sequence[float],
             img: Path) -> list[Path]:
    from harvester.sim.metrics.plots import pyplot

    plt = pyplot()
    img.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    # 1. losses per million blocks, per R and policy (zero drawn at the floor with its bound)
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.25
    for i, p in enumerate(POLICIES):
        xs, ys, zero = [], [], []
        for j, r in enumerate(setup.replications):
            sel = select(rows, policy=p, replication=r)
            lost, n = _sum(sel, "blocks_lost"), _sum(sel, "blocks_written")
            xs.append(j + (i - 1) * width)
            ys.append(lost * 1e6 / n if lost else 3e6 / n)
            zero.append(lost == 0)
        bars = ax.bar(xs, ys, width, color=COLORS[p], label=NAMES[p])
        for b, z in zip(bars, zero):
            if z:
                b.set_hatch("//")
                b.set_alpha(0.35)
    ax.set_yscale("log")
    written_blocks = max(_sum(select(rows, policy=p, replication=r), "blocks_written") for p in POLICIES
                         for r in setup.replications)
    ax.set_ylim(bottom=3e6 / max(written_blocks, 1) / 3)
    ax.set_xticks(range(len(setup.replications)), [f"R={r}" for r in setup.replications])
    ax.set_ylabel("blocks lost per million written")
    ax.set_title("Blocks lost in one month (all levels and seeds; hatched = none lost, bar = 95 % bound)")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    written.append(img / "hdfs_grid_losses.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)
    # 2. unavailability vs utilization level (R=3)
    fig, ax = plt.subplots(figsize=(7, 4))
    for p in POLICIES:
        ys = [float(np.mean([r["unavailable_fraction"] for r in select(rows, policy=p, replication=3, level=lv)]))
              for lv in levels]
        ax.plot([lv * 100 for lv in levels], [max(y, 1e-9) for y in ys], marker="o", color=COLORS[p], label=NAMES[p])
    ax.set_yscale("log")
    ax.set_xlabel("mean primary CPU utilization (%)")
    ax.set_ylabel("share of block-time unavailable (1e-9 = none)")
    ax.set_title("Unavailability at R=3: all live replicas on busy primaries")
    ax.legend(fontsize=8)
    fig.tight_layout()
    written.append(img / "hdfs_grid_unavailability.png")
    fig.savefig(written[-1], dpi=120)
    plt.close(fig)
    # 3. losses vs re-replication delay (R=2 and R=3)
    delays = [("0.25 h", base_level)] + [(v, select(sens, study="delay", value=v))
                                        for v in dict.fromkeys(r["value"] for r in sens if r["study"] == "delay")]
    if len(delays) > 1:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
        for ax, rep in zip(axes, (2, 3)):
            for p in POLICIES:
                ys = []
                for _, sel in delays:
                    ps = select(sel, policy=p, replication=rep)
                    ys.append(_sum(ps, "blocks_lost") * 1e6 / max(_sum(ps, "blocks_written"), 1))
                ax.plot(range(len(delays)), [max(y, 0.1) for y in ys], marker="o", color=COLORS[p], label=NAMES[p])
            ax.set_xticks(range(len(delays)), [d for d, _ in delays])
            ax.set_yscale("log")
            ax.set_title(f"R={rep}")
            ax.set_xlabel("re-replication delay")
        axes[0].set_ylabel("blocks lost per million (floor 0.1 = none)")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        written.append(img / "hdfs_grid_sensitivity_delay.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
    return written


def write_report(results: Sequence[Row], setup: Setup, out: Path, *, provenance: str, command: str,
                 wall_s: float, workers: int | None = None) -> list[Path]:
    """Write the page, its figures and the raw rows under `out`; returns the files written."""
    from harvester.sim.evaluate_hdfs_text import render

    out.mkdir(parents=True, exist_ok=True)
    main = select(results, study="main")
    sens = [r for r in results if r["study"] != "main"]
    levels = sorted({r["level"] for r in main})
    sens_level = sens[0]["level"] if sens else (0.5 if 0.5 in levels else levels[0])
    base_level = select(main, level=sens_level)
    figures = _figures(main, sens, base_level, setup, levels, out / "img")
    raw = out / "hdfs_grid_results.json"
    raw.write_text(json.dumps({"setup": asdict(setup), "provenance": provenance, "command": command,
                               "wall_s": round(wall_s, 1), "workers": workers, "rows": list(results)}, indent=1) + "\n")
    losses_md, totals = losses_table(main, setup.replications)
    avail_md, avail = availability_table(main, levels, 3)
    page = render(main=main, sens=sens, setup=setup, levels=levels, totals=totals, avail=avail,
                  losses_md=losses_md, avail_md=avail_md,
                  sens_md=sensitivity_table(sens, base_level) if sens else "",
                  figures=[f.relative_to(out).as_posix() for f in figures], provenance=provenance, command=command,
                  wall_s=wall_s, workers=workers, ratio=_ratio)
    md = out / "hdfs_grid.md"
    md.write_text(page)
    return [md, raw, *figures]
