"""Synthetic worker attributes for the Phoenix evaluation (no public trace has them).

The staged traces carry no node properties (../shared/traces/README.md: "Node attributes and
task constraints (Phoenix): ... synthesize the rest"). The shares follow the Phoenix-derived
simulator (docs/evaluation/phoenix-fidelity.md, S1): each Table II constraint type is satisfied
by a fixed share of the workers — ISA all, cores 60%, max disks 20%, min disks 45%, Number of
Nodes ("num_cpus") 75%, kernel 69%, clock 22%, Ethernet 58%. The values are labels chosen to
give those shares with the constraints of synthesis.TABLE_II (`cores>=32`, `disks<=2`,
`disks>=6`, ...). Our choice: every worker draws every attribute independently (the source uses
a contiguous window of worker indices at a random offset per type; with one constraint per job
only the per-type share matters). Workers sit `per_rack` to a rack. Values are strings, compared
by harvester.models.constraints rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harvester.models.constraints import AttrValue, NodeTable

#: attribute -> (values, probabilities); every worker draws each attribute independently.
ATTRIBUTE_MIX: dict[str, tuple[tuple[str, ...], tuple[float, ...]]] = {
    "isa": (("x86_64",), (1.0,)),                       # ISA: every worker (source: N-1 of N)
    "cores": (("16", "32"), (0.40, 0.60)),              # cores>=32: 60%
    "disks": (("2", "3", "6"), (0.20, 0.35, 0.45)),     # disks<=2: 20%, disks>=6: 45%
    "cpus": (("1", "2"), (0.25, 0.75)),                 # Number of Nodes, cpus>=2: 75%
    "kernel": (("4.19", "5.10"), (0.31, 0.69)),         # kernel>=5.10: 69%
    "clock_ghz": (("2.4", "3.4"), (0.78, 0.22)),        # clock_ghz>=3.4: 22%
    "nic_gbps": (("1", "10"), (0.42, 0.58)),            # nic_gbps>=10: 58%
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


def synthesize_workers(n: int, seed: int, per_rack: int = 40,
                       mix: Mapping[str, tuple[tuple[str, ...], tuple[float, ...]]] | None = None) -> Workers:
    """`mix` replaces the shares of some attributes (the mechanism scenario's scarce attribute)."""
    if n < 1 or per_rack < 1:
        raise ValueError("need at least one worker and one worker per rack")
    rng = np.random.default_rng(seed)
    columns = {name: rng.choice(np.array(values, dtype=object), size=n, p=np.array(p) / sum(p))
               for name, (values, p) in {**ATTRIBUTE_MIX, **(mix or {})}.items()}
    rack = np.arange(n) // per_rack
    attrs = tuple({"rack": f"/rack{rack[i]}", **{k: str(v[i]) for k, v in columns.items()}} for i in range(n))
    return Workers(NodeTable([f"w{i}" for i in range(n)], attrs), rack, attrs)
