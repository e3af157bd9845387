"""Response time of the YARN emulator's `GET /ws/v1/cluster/nodes` for 10,000 NodeManagers.

A 10,000-node emulated cluster (8 vcores / 8 physical cores / 64 GB each, primary tenants
burning 0-6 cores, 40 distributed-shell apps holding 10,000 containers) served over real HTTP
on loopback. Timed with `requests` from send to the last byte (median of `--runs`):

* `seconds_10k_nodes_response`  a poll 1 s after the previous one: the clock advanced, about a
                                third of the NMs published a new utilization sample, so their
                                JSON is re-rendered (the realistic polling case);
* `seconds_cached`              a poll with nothing changed (every node's text cached);
* `seconds_cold`                the first poll after every node changed (all re-rendered).

    .venv/bin/python bench/emulator_nodes.py [--nodes 10000] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harvester.clock import SimClock  # noqa: E402
from harvester.domain import Resources  # noqa: E402
from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer, Workload  # noqa: E402

TARGET_S = 1.0


def build(n: int) -> tuple[SimClock, Emulator]:
    clock = SimClock(start=1_795_430_000.0)
    emu = Emulator(clock, EmulatorConfig(seed=7))
    w = Workload(emu)
    ids = w.add_cluster(n, Resources(65536, 8), physical_cores=8.0, racks=20)
    rng = np.random.default_rng(3)
    w.set_primary(None, rng.uniform(0.0, 6.0, size=n), rng.uniform(4000, 30000, size=n))
    for _ in range(max(1, n // 250)):
        w.distributed_shell(249, Resources(2048, 1), cpu_cores=0.5)
    clock.advance(300.0)  # every app placed (one container per node heartbeat), samples published
    emu.sync()
    assert len(ids) == n
    return clock, emu


def timed_get(session: requests.Session, url: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = session.get(url + "/ws/v1/cluster/nodes", timeout=120)
    body = r.content
    took = time.perf_counter() - t0
    assert r.status_code == 200
    return took, len(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    t_build = time.perf_counter()
    clock, emu = build(args.nodes)
    build_s = time.perf_counter() - t_build
    session = requests.Session()
    polled, cached, cold = [], [], []
    size = 0
    with EmulatorServer(emu) as server:
        timed_get(session, server.url)  # warm the connection and the render cache
        for _ in range(args.runs):
            clock.advance(1.0)
            took, size = timed_get(session, server.url)
            polled.append(took)
            cached.append(timed_get(session, server.url)[0])
            emu.node_version += 1  # every node changed: full re-render
            cold.append(timed_get(session, server.url)[0])
    figures = {
        "seconds_10k_nodes_response": statistics.median(polled),
        "seconds_cached": statistics.median(cached),
        "seconds_cold": statistics.median(cold),
        "response_mb": size / 1e6,
        "nodes": args.nodes,
        "build_cluster_s": build_s,
        "runs": args.runs,
    }
    result = {
        "name": "emulator_nodes",
        "command": "python bench/emulator_nodes.py " + " ".join(sys.argv[1:]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "figures": figures,
        "targets": {"seconds_10k_nodes_response": TARGET_S},
        "seconds_10k_nodes_response": figures["seconds_10k_nodes_response"],
    }
    out = REPO / "bench" / "results" / "emulator_nodes.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'figure':32} {'value':>12}")
    for k, v in figures.items():
        print(f"{k:32} {v:12.4f}" if isinstance(v, float) else f"{k:32} {v:12}")
    print(f"target seconds_10k_nodes_response < {TARGET_S} s -> wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
