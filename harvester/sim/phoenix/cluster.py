"""Synthetic worker attributes for the Phoenix evaluation (no public trace has them).

The staged traces carry no node properties (../shared/traces/README.md: "Node attributes and
task constraints (Phoenix): ... synthesize the rest"). Each worker draws every attribute
independently from `ATTRIBUTE_MIX` (our choice, stated in docs/evaluation/phoenix.md: a
mostly-x86 fleet where every attribute has a rare value held by 3% of the workers, so that
constraints on rare values are scarce — the imbalance behind Table II's ~2x slowdowns). Workers sit
`per_rack` to a rack. Values are strings, compared by harvester.models.constraints rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harvester.models.constraints import AttrValue, NodeTable

#: attribute -> (values, probabilities); every worker draws each attribute independently.
ATTRIBUTE_MIX: dict[str, tuple[tuple[str, ...], tuple[float, ...]]] = {
    "isa": (("x86_64", "aarch64", "ppc64le"), (0.90, 0.07, 0.03)),
    "cores": (("8", "16", "32", "64", "96"), (0.25, 0.35, 0.27, 0.10, 0.03)),
    "clock_ghz": (("2.0", "2.4", "2.9", "3.4", "3.8"), (0.30, 0.35, 0.22, 0.10, 0.03)),
    "nic_gbps": (("1", "10", "25", "100"), (0.20, 0.55, 0.22, 0.03)),
    "kernel": (("4.19", "5.4", "5.10", "5.15", "6.1"), (0.20, 0.37, 0.30, 0.10, 0.03)),
    "disks": (("1", "2", "4", "6", "12", "24"), (0.03, 0.22, 0.30, 0.25, 0.17, 0.03)),
    "platform": (("A", "B", "C", "D"), (0.50, 0.27, 0.20, 0.03)),
    "gpu": (("0", "1"), (0.95, 0.05)),
}


@dataclass(frozen=True, eq=False)
class Workers:
    """N one-slot workers: their attributes as a NodeTable and their rack index."""

    table: NodeTable
    rack: np.ndarray
    attributes: tuple[dict[str, AttrValue], ...]

    @property
    def size(self) -> int:
        return self.table.size


def synthesize_workers(n: int, seed: int, per_rack: int = 40) -> Workers:
    if n < 1 or per_rack < 1:
        raise ValueError("need at least one worker and one worker per rack")
    rng = np.random.default_rng(seed)
    columns = {name: rng.choice(np.array(values, dtype=object), size=n, p=np.array(p) / sum(p))
               for name, (values, p) in ATTRIBUTE_MIX.items()}
    rack = np.arange(n) // per_rack
    attrs = tuple({"rack": f"/rack{rack[i]}", **{k: str(v[i]) for k, v in columns.items()}} for i in range(n))
    return Workers(NodeTable([f"w{i}" for i in range(n)], attrs), rack, attrs)
