"""Decode speed of a 10,000-node ``GET /ws/v1/cluster/nodes`` answer (target < 0.2 s) and
peak memory of decoding ~60 MB ``/nodes`` and ``/apps`` answers (target < 5 MB per answer MB,
issue 29).

The body is synthesized from the two real node entries of the capture ``nodes-running.json``
(Hadoop 3.3.6): ids, host names and numbers are varied per node, the shape is untouched.
Timed separately (median of ``--runs``):

* ``json_loads_s``           plain ``json.loads`` of the bytes (cyclic GC on, as a naive caller);
* ``decode_models_s``        parsed JSON -> ``Node`` models (``decode_nodes``);
* ``client_path_s``          the client's whole answer path without HTTP, bytes -> models
                             (``endpoints.decode_answer``: the streamed decode of
                             rm_client/wire/streamed.py); also the flat key ``seconds_10k_nodes``
                             when ``--nodes`` is 10000;
* ``plain_path_s``           the same answer through the plain path (whole JSON parse with GC
                             paused, then the field tables: the client before issue 29).

Memory (``--rss-mb``, default 60; 0 skips): a ``/nodes`` and an ``/apps`` answer of about that
size are written to a temporary file; for each, a fresh child process imports rm_client, notes
its peak RSS (``getrusage(RUSAGE_SELF).ru_maxrss``), reads the body and decodes it, and reports
its peak RSS again. ``peak_rss_mb_per_answer_mb`` = (peak after - peak before reading) / answer
MB (the body itself counts: 1.0 is the floor; the same from ``VmHWM`` is recorded beside it), the worst of /nodes and /apps through the client
path; the plain path is measured the same way for comparison. Absolute peaks are recorded too.

``--emulator-url URL`` also times ``RMClient.list_nodes()`` against a running emulator (the
hook for the emulator's own figure); without it that figure is recorded as null, never guessed.

    .venv/bin/python bench/rm_client_decode.py [--nodes 10000] [--runs 7] [--rss-mb 60] [--emulator-url URL]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import gc
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rm_client import RMClient, RMClientConfig  # noqa: E402
from rm_client.endpoints import ENDPOINTS, decode_answer  # noqa: E402
from rm_client.wire.nodes import decode_nodes  # noqa: E402

TARGET_S = 0.2
TARGET_RSS_PER_MB = 5.0
FIXTURES = Path(os.environ.get("HARVESTER_FIXTURES_DIR") or REPO / "tests" / "data" / "shared" / "fixtures")  # vendored copy


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


def synthesize_apps(n: int, seed: int = 1) -> bytes:
    """``n`` apps built from the recorded entries of ``apps-running.json``, each with its own id
    and numbers; the shape (repeated-key ``resourceSecondsMap`` included) is kept by writing the
    body with :func:`rm_client.wire.apps.encode_apps` from the decoded models."""
    from dataclasses import replace

    from rm_client.wire._json import dumps, loads
    from rm_client.wire.apps import decode_apps, encode_apps

    recorded = decode_apps(loads((FIXTURES / "yarn-3.3.6" / "captures" / "apps-running.json").read_bytes()))
    rng = random.Random(seed)
    apps = []
    for i in range(n):
        app = recorded[i % len(recorded)]
        mb = rng.randrange(1024, 65536, 512)
        apps.append(replace(app, id=f"application_1795420000000_{i:06d}", name=f"job-{i}", allocated_mb=mb,
                            allocated_vcores=rng.randint(1, 64), memory_seconds=rng.randint(0, 10**9),
                            started_time_ms=app.started_time_ms + i,
                            resource_seconds=(("memory-mb", rng.randint(0, 10**9)), ("vcores", rng.randint(0, 10**6)))))
    return dumps(encode_apps(apps))


def _child(path: str, endpoint_name: str, mode: str) -> int:
    """One memory measurement (run as a fresh process): only import, read, decode."""
    import dataclasses

    endpoint = ENDPOINTS[endpoint_name]
    if mode == "plain":
        endpoint = dataclasses.replace(endpoint, decode_body=None)
    before, hwm_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, _vm_hwm_kb()
    body = Path(path).read_bytes()
    t0 = time.perf_counter()
    models = decode_answer(endpoint, 200, body)
    secs = time.perf_counter() - t0
    peak, hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, _vm_hwm_kb()
    print(json.dumps({"before_kb": before, "peak_kb": peak, "hwm_before_kb": hwm_before, "hwm_kb": hwm,
                      "items": len(models), "seconds": secs}))
    return 0


def _vm_hwm_kb() -> int:
    """This process image's own peak RSS (``VmHWM``; ``ru_maxrss`` also keeps the parent's
    size at fork time, which is why the parent makes no big body before the children run)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def _make_bodies(folder: str, target_mb: float) -> int:
    """Write nodes.json and apps.json of about ``target_mb`` each (run as a child process)."""
    nodes_per_mb = 10_000 / (len(synthesize(10_000)) / 1e6)
    apps_per_mb = 1_000 / (len(synthesize_apps(1_000)) / 1e6)
    (Path(folder) / "nodes.json").write_bytes(synthesize(int(target_mb * nodes_per_mb)))
    (Path(folder) / "apps.json").write_bytes(synthesize_apps(int(target_mb * apps_per_mb)))
    return 0


def rss_figures(target_mb: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, __file__, "--make-bodies", tmp, str(target_mb)], check=True)
        for name in ("nodes", "apps"):
            path = Path(tmp) / f"{name}.json"
            mb = path.stat().st_size / 1e6
            out[f"{name}_answer_mb"] = round(mb, 2)
            for mode in ("client", "plain"):
                res = subprocess.run([sys.executable, __file__, "--child", str(path), name, mode],
                                     capture_output=True, text=True, check=True)
                got = json.loads(res.stdout)
                grown = (got["peak_kb"] - got["before_kb"]) / 1024
                out[f"{name}_{mode}_items"] = got["items"]
                out[f"{name}_{mode}_seconds"] = round(got["seconds"], 3)
                out[f"{name}_{mode}_peak_rss_mb"] = round(got["peak_kb"] / 1024, 1)
                out[f"{name}_{mode}_rss_before_mb"] = round(got["before_kb"] / 1024, 1)
                out[f"{name}_{mode}_rss_growth_per_answer_mb"] = round(grown / mb, 2)
                out[f"{name}_{mode}_peak_rss_per_answer_mb"] = round(got["peak_kb"] / 1024 / mb, 2)
                out[f"{name}_{mode}_vm_hwm_growth_per_answer_mb"] = round(
                    (got["hwm_kb"] - got["hwm_before_kb"]) / 1024 / mb, 2)
    return out


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
    ap.add_argument("--rss-mb", type=float, default=60.0, help="answer size for the memory figures (0: skip)")
    ap.add_argument("--child", nargs=3, metavar=("FILE", "ENDPOINT", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--make-bodies", nargs=2, metavar=("DIR", "MB"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(*args.child)
    if args.make_bodies:
        return _make_bodies(args.make_bodies[0], float(args.make_bodies[1]))
    # memory first, while this process is small (a child's ru_maxrss starts at its parent's size)
    rss = rss_figures(args.rss_mb) if args.rss_mb > 0 else {}

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
        "plain_path_s": median_s(lambda: decode_answer(dataclasses.replace(endpoint, decode_body=None), 200, body),
                                 args.runs),
        "runs": args.runs,
    }
    figures.update(rss)
    if args.emulator_url:
        secs, count = emulator_figure(args.emulator_url, args.runs)
        figures.update(emulator_get_nodes_s=secs, emulator_nodes=count, emulator_url=args.emulator_url)
    else:
        figures.update(emulator_get_nodes_s=None, emulator_note="not measured: run with --emulator-url")

    out = REPO / "bench" / "results" / "rm_client_decode.json"
    result: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    per_mb = max(rss["nodes_client_rss_growth_per_answer_mb"], rss["apps_client_rss_growth_per_answer_mb"]) \
        if rss else None
    result.update({
        "name": "rm_client_decode",
        "command": " ".join(["python bench/rm_client_decode.py", *sys.argv[1:]]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "figures": figures,
        "targets": {"seconds_10k_nodes": TARGET_S, "peak_rss_mb_per_answer_mb": TARGET_RSS_PER_MB},
        # the flat target key only when exactly 10k nodes were measured
        "seconds_10k_nodes": figures["client_path_s"] if args.nodes == 10_000 else None,
        "peak_rss_mb_per_answer_mb": per_mb,
    })
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"rm_client decode, {args.nodes} nodes ({figures['body_mb']} MB), median of {args.runs} runs")
    print(f"{'step':<44}{'seconds':>10}")
    print(f"{'json.loads (GC on)':<44}{figures['json_loads_s']:>10.3f}")
    print(f"{'decode_nodes (parsed -> models)':<44}{figures['decode_models_s']:>10.3f}")
    print(f"{'client path: bytes -> models':<44}{figures['client_path_s']:>10.3f}  target < {TARGET_S} (10k nodes)")
    print(f"{'plain path (before issue 29)':<44}{figures['plain_path_s']:>10.3f}")
    for name in ("nodes", "apps") if rss else ():
        for mode in ("client", "plain"):
            print(f"{name} {rss[name + '_answer_mb']} MB, {mode:<6} path: peak RSS {rss[f'{name}_{mode}_peak_rss_mb']} MB "
                  f"(before reading {rss[f'{name}_{mode}_rss_before_mb']} MB), growth "
                  f"{rss[f'{name}_{mode}_rss_growth_per_answer_mb']} MB per answer MB, "
                  f"{rss[f'{name}_{mode}_seconds']} s, {rss[f'{name}_{mode}_items']} items")
    if per_mb is not None:
        print(f"peak_rss_mb_per_answer_mb {per_mb}  target < {TARGET_RSS_PER_MB}")
    emu = figures["emulator_get_nodes_s"]
    print(f"{'emulator GET /nodes (list_nodes)':<44}{'-' if emu is None else f'{emu:10.3f}':>10}")
    print(f"wrote {out.relative_to(REPO)}")
    return 0 if figures["client_path_s"] < TARGET_S and (per_mb is None or per_mb < TARGET_RSS_PER_MB) else 1


if __name__ == "__main__":
    sys.exit(main())
