"""Decode speed of a 10,000-node ``GET /ws/v1/cluster/nodes`` answer (target < 0.5 s).

The body is synthesized from the two real node entries of the capture ``nodes-running.json``
(Hadoop 3.3.6): ids, host names and numbers are varied per node, the shape is untouched.
Timed separately (median of ``--runs``):

* ``json_loads_s``           plain ``json.loads`` of the bytes (cyclic GC on, as a naive caller);
* ``decode_models_s``        parsed JSON -> ``Node`` models (``decode_nodes``);
* ``client_path_s``          the client's whole answer path without HTTP, bytes -> models
                             (``endpoints.decode_answer``: JSON parse with GC paused + decode);
                             also the flat key ``seconds_10k_nodes`` when ``--nodes`` is 10000.

``--emulator-url URL`` also times ``RMClient.list_nodes()`` against a running emulator (the
hook for the emulator's own figure); without it that figure is recorded as null, never guessed.

    .venv/bin/python bench/rm_client_decode.py [--nodes 10000] [--runs 7] [--emulator-url http://127.0.0.1:8088]
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rm_client import RMClient, RMClientConfig  # noqa: E402
from rm_client.endpoints import ENDPOINTS, decode_answer  # noqa: E402
from rm_client.wire.nodes import decode_nodes  # noqa: E402

TARGET_S = 0.5
FIXTURES = Path(os.environ.get("HARVESTER_FIXTURES_DIR") or REPO.parent / "shared" / "fixtures")


def synthesize(n: int, seed: int = 1) -> bytes:
    """``n`` nodes built from the recorded entries, each with its own id and numbers."""
    recorded = json.loads((FIXTURES / "yarn-3.3.6" / "captures" / "nodes-running.json").read_text())["nodes"]["node"]
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        node = copy.deepcopy(recorded[i % len(recorded)])
        total_mb, total_vc = node["totalResource"]["memory"], node["totalResource"]["vCores"]
        used_vc = rng.randint(0, total_vc)
        used_mb = min(total_mb, used_vc * 512 + rng.randrange(0, 2048, 128))
        node.update(id=f"nm-{i:05d}.example.com:45454", nodeHostName=f"nm-{i:05d}.example.com",
                    nodeHTTPAddress=f"nm-{i:05d}.example.com:8042", numContainers=used_vc,
                    usedMemoryMB=used_mb, availMemoryMB=total_mb - used_mb, usedVirtualCores=used_vc,
                    availableVirtualCores=total_vc - used_vc, lastHealthUpdate=node["lastHealthUpdate"] + i,
                    cpuUtilization=rng.uniform(0, 100), memUtilization=rng.uniform(0, 100))
        ru = node["resourceUtilization"]
        ru.update(nodeCPUUsage=rng.uniform(0, 2), containersCPUUsage=rng.uniform(0, 8),
                  nodePhysicalMemoryMB=rng.randint(1000, 24000))
        for key, mb, vc in (("usedResource", used_mb, used_vc), ("availableResource", total_mb - used_mb,
                                                                  total_vc - used_vc)):
            node[key]["memory"], node[key]["vCores"] = mb, vc
            infos = node[key]["resourceInformations"]["resourceInformation"]
            infos[0]["value"], infos[1]["value"] = mb, vc
        nodes.append(node)
    return json.dumps({"nodes": {"node": nodes}}, separators=(",", ":")).encode()


def median_s(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def emulator_figure(url: str, runs: int) -> tuple[float, int]:
    client = RMClient(RMClientConfig(urls=(url,), read_timeout_s=60.0, max_retries=0))
    count = len(client.list_nodes())
    return median_s(client.list_nodes, runs), count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--emulator-url", default=None, help="time GET /ws/v1/cluster/nodes on a running emulator")
    args = ap.parse_args()

    body = synthesize(args.nodes)
    parsed = json.loads(body)
    assert len(decode_nodes(parsed)) == args.nodes
    endpoint = ENDPOINTS["nodes"]
    gc.collect()
    figures: dict[str, Any] = {
        "load_avg_1m_before": round(os.getloadavg()[0], 2),  # other work on the machine skews timings
        "nodes": args.nodes,
        "body_mb": round(len(body) / 1e6, 2),
        "json_loads_s": median_s(lambda: json.loads(body), args.runs),
        "decode_models_s": median_s(lambda: decode_nodes(parsed), args.runs),
        "client_path_s": median_s(lambda: decode_answer(endpoint, 200, body), args.runs),
        "runs": args.runs,
    }
    if args.emulator_url:
        secs, count = emulator_figure(args.emulator_url, args.runs)
        figures.update(emulator_get_nodes_s=secs, emulator_nodes=count, emulator_url=args.emulator_url)
    else:
        figures.update(emulator_get_nodes_s=None, emulator_note="not measured: run with --emulator-url")

    result = {
        "name": "rm_client_decode",
        "command": " ".join(["python bench/rm_client_decode.py", *sys.argv[1:]]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "figures": figures,
        "targets": {"seconds_10k_nodes": TARGET_S},
        # the flat target key only when exactly 10k nodes were measured
        "seconds_10k_nodes": figures["client_path_s"] if args.nodes == 10_000 else None,
    }
    out = REPO / "bench" / "results" / "rm_client_decode.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"rm_client decode, {args.nodes} nodes ({figures['body_mb']} MB), median of {args.runs} runs")
    print(f"{'step':<44}{'seconds':>10}")
    print(f"{'json.loads (GC on)':<44}{figures['json_loads_s']:>10.3f}")
    print(f"{'decode_nodes (parsed -> models)':<44}{figures['decode_models_s']:>10.3f}")
    print(f"{'client path: bytes -> models':<44}{figures['client_path_s']:>10.3f}  target < {TARGET_S} (10k nodes)")
    emu = figures["emulator_get_nodes_s"]
    print(f"{'emulator GET /nodes (list_nodes)':<44}{'-' if emu is None else f'{emu:10.3f}':>10}")
    print(f"wrote {out.relative_to(REPO)}")
    return 0 if figures["client_path_s"] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
