"""Benchmark of the command line's start-up: heavy libraries are imported where they are used.

    .venv/bin/python bench/cli_start.py [--repeats 7]

Each command runs in a fresh process, `--repeats` times; figures are medians of the wall time
(process start to exit) and of the CPU time (user + system of the child). Commands:
1. `harvester --help` — registers every subcommand (no settings, no network);
2. `harvester rm nodes --rm-url URL` — one real HTTP request to the YARN emulator this script
   serves on loopback (the demo cluster), the table rendered;
3. `python -c "import harvester.app"` — the composition root, for reference (what `serve` loads
   before it starts anything).
Targets: `--help` and `rm nodes` under 0.5 s wall. The machine is shared: the 1-minute load
average during the run is recorded, and CPU time is the figure that does not depend on it.
Writes bench/results/cli_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_S = 0.5


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run; the command must exit 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(cmd: list[str], repeats: int) -> dict[str, float]:
    timed(cmd)  # warm the page cache and the .pyc files
    runs = [timed(cmd) for _ in range(repeats)]
    return {"wall_s": statistics.median(w for w, _ in runs), "cpu_s": statistics.median(c for _, c in runs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    from harvester.app import start_embedded_cluster
    from harvester.clock import RealClock
    from harvester.config import parse_settings

    server, _ = start_embedded_cluster(parse_settings({"embedded": {"listen": "127.0.0.1:0"}}, environ={}), RealClock())
    server.start()
    exe = str(Path(sys.executable).with_name("harvester"))
    commands = {
        "help": [exe, "--help"],
        "rm_nodes": [exe, "rm", "nodes", "--rm-url", server.url],
        "import_app": [sys.executable, "-c", "import harvester.app"],
    }
    try:
        figures: dict[str, float] = {}
        for name, cmd in commands.items():
            m = measure(cmd, args.repeats)
            figures[f"{name}_wall_s"] = m["wall_s"]
            figures[f"{name}_cpu_s"] = m["cpu_s"]
            print(f"{' '.join(cmd[1:]) if name != 'import_app' else 'python -c import harvester.app':<60} "
                  f"wall {m['wall_s']:.3f} s   cpu {m['cpu_s']:.3f} s")
    finally:
        server.stop()
    figures["load_average_1min"] = os.getloadavg()[0]
    out = {
        "name": "cli_start",
        "command": f"python bench/cli_start.py --repeats {args.repeats}",
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "figures": figures,
        "targets": {"help_wall_s": TARGET_S, "rm_nodes_wall_s": TARGET_S},
        "help_wall_s": figures["help_wall_s"],
        "rm_nodes_wall_s": figures["rm_nodes_wall_s"],
    }
    path = ROOT / "bench" / "results" / "cli_start.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"load average (1 min) {figures['load_average_1min']:.2f}; wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
