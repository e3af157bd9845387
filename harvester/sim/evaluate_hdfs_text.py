"""The text of docs/evaluation/hdfs_grid.md, written from the evaluation's numbers.

Every number and every comparison in the page is computed here from the rows, so the page
stays true when the command is re-run with other seeds, sizes or traces; only the description
of the method and its limits is fixed text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from harvester.sim.evaluate_hdfs import POLICIES, Row, Setup, select

NAMES = {"grid": "HDFS-H grid", "stock": "stock HDFS", "greedy": "greedy best-first"}


def _lost(rows: Sequence[Row], **match: Any) -> tuple[int, int]:
    sel = select(rows, **match)
    return int(sum(r["blocks_lost"] for r in sel)), int(sum(r["blocks_written"] for r in sel))


def _triple(rows: Sequence[Row], replication: int) -> str:
    return ", ".join(f"{NAMES[p]} {_lost(rows, policy=p, replication=replication)[0]}" for p in POLICIES)


def _paper_table(main: Sequence[Row], setup: Setup, levels: Sequence[float], avail: dict, ratio: Callable) -> str:
    g3, w3 = _lost(main, policy="grid", replication=3)
    s3, _ = _lost(main, policy="stock", replication=3)
    g4, w4 = _lost(main, policy="grid", replication=4)
    grid_avail = ", ".join(f"{avail.get((lv, 'grid'), 0.0):.1e} at {lv:.0%}" for lv in levels)
    stock_avail = ", ".join(f"{avail.get((lv, 'stock'), 0.0):.1e} at {lv:.0%}" for lv in levels)
    return "\n".join([
        "| claim (OSDI'16 §1/§6) | paper | ours (all levels and seeds pooled) |",
        "|---|---|---|",
        f"| blocks lost, stock HDFS ÷ HDFS-H, R=3 | > 100x | {ratio(s3, g3)} of {w3:,} blocks each |",
        f"| blocks lost by HDFS-H, R=4 | 0 | {g4} of {w4:,} |",
        f"| unavailability under HDFS-H (share of block-time, R=3) | none for most utilization levels | "
        f"{grid_avail} (stock HDFS: {stock_avail}) |",
    ])


def _durability_findings(main: Sequence[Row], setup: Setup) -> str:
    lines = [f"- R={r}: blocks lost — {_triple(main, r)}." for r in setup.replications]
    s3, w3 = _lost(main, policy="stock", replication=3)
    g3, _ = _lost(main, policy="grid", replication=3)
    bound = " The grid lost none, so the ratio is a lower bound." if g3 == 0 else ""
    lines.append(f"- Counting limits the ratio: with {w3:,} blocks per policy at R=3, a 100x difference can only "
                 f"show if stock HDFS loses at least 100 blocks; it lost {s3}.{bound}")
    per_cell = [r["blocks_lost"] for r in select(main, policy="stock", replication=3)]
    if s3:
        lines.append(f"- Losses are rare, correlated events: the worst of the {len(per_cell)} cells holds "
                     f"{max(per_cell)} of stock HDFS's {s3} losses at R=3 (per cell: {', '.join(map(str, per_cell))}). "
                     "Levels differ in their seeds' reimages, not only in load: stock HDFS ignores load, so its "
                     "spread across levels is sampling noise.")
    destroyed = {p: int(np.sum([r["replicas_destroyed"] for r in select(main, policy=p, replication=3)])) for p in POLICIES}
    lines.append("- Replicas destroyed by reimages at R=3 (the exposure each policy chose, each destroyed replica "
                 "costs a re-replication): " + ", ".join(f"{NAMES[p]} {destroyed[p]:,}" for p in POLICIES) + ".")
    if _lost(main, policy="greedy")[0] == 0:
        lines.append(
            "- Greedy best-first lost no block in any cell, at any R: it keeps every replica on the tenants that "
            "reimaged least in month 0, and the generator keeps tenants' ranks stable from month to month (as "
            "Fig. 6 reports), so those tenants rarely reimage in month 1 either; its replicas are destroyed "
            f"{destroyed['grid'] / max(destroyed['greedy'], 1):.1f}x less often than the grid's, which by design "
            "puts a third of the storage in the most-reimaged row. Greedy pays in availability (next section).")
    return "\n".join(lines)


def _availability_findings(levels: Sequence[float], avail: dict) -> str:
    def times(a: float, b: float) -> str:
        return "∞" if b == 0 and a > 0 else ("—" if b == 0 else f"{a / b:.3g}x")

    per_level = "; ".join(
        f"at {lv:.0%} stock HDFS {times(avail[(lv, 'stock')], avail[(lv, 'grid')])} and greedy "
        f"{times(avail[(lv, 'greedy')], avail[(lv, 'grid')])} the grid's unavailable block-time" for lv in levels)
    return ("Busy primaries make replicas unreadable, not lost. Stock HDFS ignores primaries, and its second and "
            "third replicas share a rack (usually a tenant), so they turn busy together. Greedy ranks tenants by "
            "reimage rate first and peak CPU only second, so the few tenants it fills are busy whenever their load "
            "peaks. The grid puts each replica in another peak-CPU column and steers new replicas away from busy "
            f"servers: {per_level}.")


def _sensitivity_findings(sens: Sequence[Row], base: Sequence[Row]) -> str:
    if not sens:
        return ""
    out = []

    def per_million(rows: Sequence[Row], policy: str, replication: int) -> str:
        lost, written = _lost(rows, policy=policy, replication=replication)
        return f"{lost * 1e6 / written:.3g}" if written else "—"

    striped = select(sens, study="topology")
    if striped:
        a, _ = _lost(striped, policy="stock", replication=3)
        b, _ = _lost(base, policy="stock", replication=3)
        a2, _ = _lost(striped, policy="stock", replication=2)
        b2, _ = _lost(base, policy="stock", replication=2)
        text = (f"- Reading the topology row: with racks striped across tenants stock HDFS lost {a} (R=3) and {a2} "
                f"(R=2) blocks instead of {b} and {b2} with racks that follow tenants.")
        if a < b:
            text += (" At R=3 much of its loss comes from the rack rule: the second and third replicas share a remote "
                     "rack, hence usually a tenant, which one repurposing or wave wipes at once.")
        if a2 > b2:
            text += (" At R=2 striping raises its losses: the writer's own tenant then has servers on every rack, so "
                     "the second replica more often lands in the writer's tenant.")
        out.append(text)
    delay = select(sens, study="delay")
    if delay:
        worst = list(dict.fromkeys(r["value"] for r in delay))[-1]
        g, _ = _lost(select(delay, value=worst), policy="grid", replication=3)
        st, _ = _lost(select(delay, value=worst), policy="stock", replication=3)
        out.append(f"- Reading the delay row: every policy's losses grow with the time a lost replica waits to be "
                   f"re-created; at {worst} the grid lost {g} and stock HDFS {st} blocks at R=3. The default 15 min is "
                   "the NameNode's dead-node timeout plus a few minutes; recovering a large correlated reimage takes "
                   "longer, so the longer delays are the realistic side for big events.")
    drift = select(sens, study="history")
    if drift:
        gr, _ = _lost(drift, policy="greedy")
        g2, _ = _lost(drift, policy="grid", replication=2)
        st2, _ = _lost(drift, policy="stock", replication=2)
        text = (f"- Reading the history row: with tenants' reimage rates drifting from month to month (lognormal "
                f"sigma 1.0 instead of the generator's 0.05) the grid lost {g2} and stock HDFS {st2} blocks at R=2, "
                f"greedy {gr} at R=2 and 3 together.")
        if gr == 0:
            text += (" Greedy, which relies on month 0 ranking month 1 correctly, still lost none: a factor-of-three "
                     "drift does not lift the quietest third of tenants (<= 0.08 reimages per server-month) anywhere "
                     "near the busiest (up to 5).")
        out.append(text)
    repurpose = [v for v in dict.fromkeys(r["value"] for r in sens if r["study"] == "correlation") if "repurpos" in v]
    if repurpose:
        sel = select(sens, study="correlation", value=repurpose[0])
        out.append(f"- Reading the correlation rows: {repurpose[0]} raises stock HDFS's R=3 losses to "
                   f"{_lost(sel, policy='stock', replication=3)[0]} (base {_lost(base, policy='stock', replication=3)[0]}) "
                   f"and leaves the grid at {_lost(sel, policy='grid', replication=3)[0]}: whole-tenant wipes are what "
                   "kills a block whose replicas share a tenant.")
    sizes = [v for v in dict.fromkeys(r["value"] for r in sens if r["study"] in ("size", "blocks"))]
    if sizes:
        rates = [f"{v}: {per_million(select(sens, value=v), 'stock', 3)}" for v in sizes]
        out.append(f"- Reading the size and blocks rows: stock HDFS's R=3 losses per million blocks written — base "
                   f"{per_million(base, 'stock', 3)}; " + "; ".join(rates) + ". The rate does not vanish with "
                   "scale, so the counts grow with the data stored. The grid lost "
                   f"{sum(_lost(select(sens, value=v), policy='grid', replication=3)[0] for v in sizes)} blocks at R=3 "
                   "in these runs.")
    if sum(_lost(select(sens, study=st), policy="greedy")[0] for st in {r["study"] for r in sens}) == 0:
        out.append(
            "- Greedy best-first lost no block in any sensitivity run either (longer delays, bigger waves, more "
            "repurposing, drifting rates, 95 % fill). In this model reimages are correlated within a tenant only, "
            "and greedy keeps a block's replicas on distinct tenants that rarely reimage, so a loss needs several "
            "quiet tenants wiped within one re-replication window. The paper's critique of greedy (§4.2: once the "
            "good tenants fill up, replicas spill onto risky ones) needs space pressure that outlasts reimages — "
            "reimages free space here, and writes arrive over the whole month — or reimages correlated across "
            "tenants; our generator has neither, so these runs neither confirm nor refute it. What they do show "
            "against greedy is availability (above) and, not modelled, every write landing on a few tenants.")
    return "\n".join(out)


def render(*, main: Sequence[Row], sens: Sequence[Row], setup: Setup, levels: Sequence[float], totals: dict, avail: dict,
           losses_md: str, avail_md: str, sens_md: str, figures: Sequence[str], provenance: str, command: str,
           wall_s: float, workers: int | None, ratio: Callable) -> str:
    seeds = sorted({r["seed"] for r in main})
    first = main[0]
    events = np.mean([r["reimage_events"] for r in select(main, policy="grid", replication=3)])
    wiped = np.mean([r["servers_wiped"] for r in select(main, policy="grid", replication=3)])
    largest = max(r["largest_event"] for r in main)
    base_level = sens[0]["level"] if sens else None
    base = select(main, level=base_level) if base_level is not None else []
    fig = {name.rsplit("/", 1)[-1]: name for name in figures}
    sections = [
        "# HDFS-H grid placement: durability and availability",
        "",
        "*Generated by the command at the end of this page; every number below comes from its run.*",
        "",
        "## Question",
        "",
        "Does placing a block's replicas on the 3x3 grid of OSDI'16 Algorithm 2 (rows: reimage-frequency bands, "
        "columns: peak-CPU bands, equal storage per cell; distinct rows, columns and environments per block) lose "
        "fewer blocks and leave fewer blocks unavailable than stock HDFS and than a greedy best-first placement, "
        "when primary tenants reimage their disks (often many servers at once) and load-spike? The paper's "
        "evaluation section is not in our copy; its abstract and §1 state the results we compare with: HDFS-H "
        "loses more than two orders of magnitude fewer blocks than stock HDFS at R=3, none at R=4, and has no "
        "unavailability for most utilization levels.",
        "",
        "## Setup",
        "",
        "| input | what | real or generated |",
        "|---|---|---|",
        f"| primary CPU | {first['servers']:,} servers in {first['tenants']} tenants "
        f"({first['tenants_from_traces']} following real series), one month of history + one evaluated month, "
        f"2-minute steps; the whole load scaled by one factor to a mean of {', '.join(f'{lv:.0%}' for lv in levels)} | "
        f"**real**: {provenance}; tenants built by the simulator (harvester/sim/tenants/layout.py, docs/traces.md) |",
        f"| reimages | `hdfs_placement.reimage.generate_reimages`: {events:.0f} events wiping {wiped:.0f} servers "
        f"per month on average (largest single event: {largest} servers); per-tenant rates stable month to month | "
        "**generated, fitted to the paper's published figures (§3.3, Figs. 4-6), not a real log** (none is "
        "public); the group sizes are our assumption |",
        f"| blocks | {setup.blocks_per_server} per server, 128 MiB, written uniformly over the evaluated month by "
        f"random servers; R in {{{', '.join(map(str, setup.replications))}}}; free space per server U(0.5, 1.5) x "
        f"a mean set so that R=3 fills {setup.fill_at_r3:.0%} of it by the month's end | generated |",
        f"| re-replication | a lost replica is re-created {setup.rereplication_delay_s / 60:g} min after the reimage "
        "(the NameNode's 10.5-min dead-node timeout plus queueing), from a live replica, on a target the policy "
        "picks | model (`hdfs_placement.durability`) |",
        f"| busy | a tenant whose average server is above {setup.busy_cpu_threshold:g} CPU makes all its servers "
        "refuse reads; a block is unavailable while all its live replicas are busy | model |",
        f"| topology | racks of {setup.rack_size} consecutive servers; tenants own consecutive servers, one "
        "environment per tenant | assumption |",
        "| policies | grid (Algorithm 2, fitted on month 0), stock HDFS (`BlockPlacementPolicyDefault`: writer, "
        "remote rack, same remote rack), greedy best-first (lowest reimage rate, then lowest peak CPU, distinct "
        "tenants) — all in `hdfs_placement/policies.py` | — |",
        "",
        f"Seeds {', '.join(map(str, seeds))} at every level; each seed draws its own tenants, reimages and writes, "
        "and all three policies see exactly the same ones.",
        "",
        "## Results beside the paper",
        "",
        _paper_table(main, setup, levels, avail, ratio),
        "",
        "## Durability",
        "",
        losses_md,
        "",
        f"![blocks lost]({fig.get('hdfs_grid_losses.png', '')})",
        "",
        _durability_findings(main, setup),
        "",
        "## Availability (R=3)",
        "",
        avail_md,
        "",
        f"![unavailability]({fig.get('hdfs_grid_unavailability.png', '')})",
        "",
        _availability_findings(levels, avail),
        "",
    ]
    if sens:
        sections += [
            f"## Why our numbers differ from the paper: sensitivity (level {base_level:.0%}, R=2 and 3)",
            "",
            "One input changed at a time against the base setup above, same seeds.",
            "",
            sens_md,
            "",
            *( [f"![losses vs re-replication delay]({fig['hdfs_grid_sensitivity_delay.png']})", ""]
               if "hdfs_grid_sensitivity_delay.png" in fig else []),
            _sensitivity_findings(sens, base),
            "",
        ]
    sections += [
        "## What limits the result",
        "",
        "- **Reimages are generated.** The generator reproduces the paper's published percentiles (Figs. 4-6) but "
        "the size and timing of correlated events — what decides whether all replicas of a block die within one "
        "re-replication window — are our assumption. A real reimage log would replace it.",
        "- **Re-replication is a fixed delay.** Real recovery time grows with the data a big correlated reimage "
        "destroys (the NameNode schedules a few blocks per DataNode every 3 s); the delay sweep brackets it.",
        "- **Scale.** Losses at R>=3 are rare events; the pooled block counts above bound what ratio can be "
        "observed at all. The paper's clusters are larger and its periods longer.",
        "- **Utilization levels are scaled real series.** Bitbrains VMs average ~5 % CPU; scaling them to 50-75 % "
        "saturates their spikes, so busy time rises steeply with the level.",
        "- **What is not modelled:** DataNode I/O load (greedy concentrates every write on a few tenants), "
        "rack failures, disk failures outside reimages, block deletion, the Balancer, and the NameNode's own "
        "target checks (stale or overloaded DataNodes).",
        "",
        "## Reproduce",
        "",
        "```sh",
        f"{command}",
        "```",
        "",
        "(Add `--from-results docs/evaluation/hdfs_grid_results.json` to rewrite this page from the saved rows "
        "without simulating again.)",
        "",
        f"Wall time of this run: {wall_s / 60:.1f} min on a process pool of "
        f"{workers or 'one process per core'}{' processes' if workers else ''}. Raw rows: "
        "[hdfs_grid_results.json](hdfs_grid_results.json).",
        "",
    ]
    return "\n".join(sections)
