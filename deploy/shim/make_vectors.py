"""Cross-language test vectors for the Java shim: Algorithm 2 and the replica rules, by Python.

    python deploy/shim/make_vectors.py OUT.json

Writes placement tables (hdfs_placement.build_placement_table over fitted grids) with requests
and the answers the Python code gives. The Java tests (deploy/shim/common/src/test/.../
CrossLanguageVectorsTest) replay every request and must give the same answers:
- choose: Algorithm 2 (hdfs_placement.algorithm2.choose_targets) driven by the SplitMix64
  stream of `seed` (hdfs_placement.splitmix): identical targets and relaxed constraints;
- verify / delete / movable: hdfs_placement.replica_rules (verify compares `satisfied`, the
  violation kinds and the unknown replicas; the message wording is not part of the contract).
Tables cover the paper's 9-tenant grid, busy and full nodes, one shared environment, tenants
outside the grid (row/col -1), and random clusters up to 1,000 DataNodes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hdfs_placement import (
    DataNode, PlacementIndex, TenantStats, build_placement_table, choose_replicas_to_delete, choose_targets,
    fit_grid, is_movable, verify_placement,
)
from hdfs_placement.splitmix import SplitMix64

SCHEMA = "harvester.shim-vectors.v1"
TB = 10**12
GB = 10**9


def grid9(*, busy=lambda r, c, k: False, remaining=lambda r, c, k: TB, shared_env: bool = False,
          extra_unclassified: int = 0) -> PlacementIndex:
    """Nine tenants, one per cell, 3 nodes each on racks /rack0../rack2 (tests/hdfs_placement's grid)."""
    nodes, stats = [], []
    for r in range(3):
        for c in range(3):
            env = "e" if shared_env else f"e{r}{c}"
            stats.append(TenantStats(f"t{r}{c}", env, (0.05, 0.5, 2.0)[r], (0.2, 0.5, 0.8)[c], 3 * TB))
            for k in range(3):
                nodes.append(DataNode(f"10.0.{r * 3 + c}.{k}:9866", f"h{r}{c}{k}", f"/rack{k}", f"t{r}{c}", env,
                                      2 * TB, remaining(r, c, k), busy(r, c, k)))
    for k in range(extra_unclassified):
        nodes.append(DataNode(f"10.9.0.{k}:9866", f"x{k}", f"/rack{k % 3}", "newcomer", "enew", 2 * TB, TB, False))
    grid = fit_grid(stats)
    return PlacementIndex(build_placement_table(nodes, grid, version=7, generated_at_ms=1_795_431_979_089,
                                                busy_cpu_threshold=0.9))


def random_cluster(rng: np.random.Generator, n_nodes: int, n_tenants: int, n_racks: int) -> PlacementIndex:
    """A random cluster: tenants in environments, some without history (unclassified), some
    nodes full or busy, free space spread over three orders of magnitude."""
    envs = max(2, n_tenants // 3)
    tenants = [(f"t{i}", f"env{int(rng.integers(envs))}") for i in range(n_tenants)]
    stats = [TenantStats(t, e, float(rng.gamma(1.0, 0.7)), float(rng.uniform(0.05, 0.95)),
                         int(rng.integers(1, 100)) * TB)
             for t, e in tenants if rng.random() > 0.1]
    nodes = []
    for i in range(n_nodes):
        t, e = tenants[int(rng.integers(n_tenants))]
        remaining = 0 if rng.random() < 0.05 else int(rng.integers(1, 1000)) * GB
        nodes.append(DataNode(f"10.{i // 250}.{(i // 25) % 10}.{i % 250}:9866", f"dn{i}", f"/rack{int(rng.integers(n_racks))}",
                              t, e, 2 * TB, remaining, bool(rng.random() < 0.1)))
    return PlacementIndex(build_placement_table(nodes, fit_grid(stats), version=int(rng.integers(1, 10**6)),
                                                generated_at_ms=1_795_431_979_089, busy_cpu_threshold=0.9))


def choose_case(ix: PlacementIndex, rng: np.random.Generator, seed: int) -> dict[str, Any]:
    ids = ix.ids
    pick = lambda k: [ids[int(i)] for i in rng.choice(len(ids), size=min(k, len(ids)), replace=False)]  # noqa: E731
    existing = pick(int(rng.integers(0, 3))) + (["10.250.0.1:9866"] if rng.random() < 0.15 else [])
    replication = len(existing) + int(rng.integers(1, 5))
    writer = [None, ids[int(rng.integers(len(ids)))], ix.table.datanodes[int(rng.integers(len(ids)))].hostname,
              "192.0.2.7"][int(rng.integers(4))]
    excluded = pick(int(rng.integers(0, max(2, len(ids) // 4))))
    favored = pick(int(rng.integers(0, 3))) if rng.random() < 0.3 else []
    block_size = int(rng.choice([0, 128 * 10**6, 400 * GB, 2 * TB]))
    res = choose_targets(ix, replication=replication, block_size=block_size, rng=SplitMix64(seed), writer=writer,
                         existing=existing, excluded=excluded, favored=favored)
    return {"seed": seed, "replication": replication, "block_size": block_size, "writer": writer,
            "existing": existing, "excluded": excluded, "favored": favored,
            "expect": {"targets": list(res.datanode_ids), "relaxed": [list(t.relaxed) for t in res.targets]}}


def rule_cases(ix: PlacementIndex, rng: np.random.Generator) -> dict[str, list[dict[str, Any]]]:
    ids = ix.ids
    out: dict[str, list[dict[str, Any]]] = {"verify": [], "delete": [], "movable": []}
    for _ in range(12):
        k = int(rng.integers(1, min(6, len(ids)) + 1))
        reps = [ids[int(i)] for i in rng.choice(len(ids), size=k, replace=False)]
        if rng.random() < 0.2:
            reps.append("10.250.0.9:9866")  # a replica the table does not know
        replication = int(rng.integers(1, 5)) if rng.random() < 0.7 else -1
        st = verify_placement(ix, reps, None if replication < 0 else replication)
        out["verify"].append({"replicas": reps, "replication": replication,
                              "expect": {"satisfied": st.satisfied, "kinds": [v.split(":")[0] for v in st.violations],
                                         "unknown": list(st.unknown)}})
        keep = int(rng.integers(1, len(reps) + 1))
        cands = [r for r in reps if rng.random() < 0.7] if rng.random() < 0.4 else None
        hint = reps[int(rng.integers(len(reps)))] if rng.random() < 0.4 else None
        d = choose_replicas_to_delete(ix, reps, keep, candidates=cands, hint=hint)
        out["delete"].append({"replicas": reps, "replication": keep, "candidates": cands, "hint": hint,
                              "expect": list(d.delete)})
        src = reps[int(rng.integers(len(reps)))]
        dst = ids[int(rng.integers(len(ids)))]
        out["movable"].append({"replicas": reps, "source": src, "target": dst, "expect": is_movable(ix, reps, src, dst)})
    return out


def build(seed: int = 20261125) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    tables = [
        ("grid9", grid9()),
        ("grid9-busy-full", grid9(busy=lambda r, c, k: (r + c + k) % 4 == 0,
                                  remaining=lambda r, c, k: 0 if (r * 3 + c + k) % 5 == 0 else (k + 1) * TB)),
        ("grid9-shared-environment", grid9(shared_env=True)),
        ("grid9-unclassified", grid9(extra_unclassified=4)),
        ("random-60", random_cluster(rng, 60, 20, 4)),
        ("random-1000", random_cluster(rng, 1000, 120, 25)),
        ("random-tiny", random_cluster(rng, 5, 4, 1)),
    ]
    cases = []
    for name, ix in tables:
        n_choose = 60 if len(ix.ids) < 100 else 30
        cases.append({"name": name, "table": ix.table.to_json(),
                      "choose": [choose_case(ix, rng, int(rng.integers(0, 2**63))) for _ in range(n_choose)],
                      **rule_cases(ix, rng)})
    stream = SplitMix64(seed)
    u64 = [stream.next_u64() for _ in range(4)]
    splitmix = {"seed": seed, "u64": [str(x) for x in u64], "uniform": [stream() for _ in range(4)]}
    return {"schema": SCHEMA, "generator": "deploy/shim/make_vectors.py", "seed": seed, "splitmix": splitmix,
            "cases": cases}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(build(), separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
