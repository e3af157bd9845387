"""The sweep's local process pool stays usable after the parent ran k-means (OpenMP threads)."""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from harvester.sim.sweep import make_executor


def _fit_in_worker(seed: int) -> int:
    x = np.random.default_rng(seed).normal(size=(200, 3))
    return int(KMeans(n_clusters=3, n_init=2, random_state=seed).fit(x).labels_.max())


def test_workers_fit_kmeans_after_the_parent_did() -> None:
    _fit_in_worker(0)  # starts the parent's OpenMP pool; a forked worker would inherit its locked state
    with make_executor(2) as pool:
        assert pool._mp_context.get_start_method() != "fork"  # noqa: SLF001 - the property that prevents the hang
        assert sorted(pool.map(_fit_in_worker, [1, 2, 3])) == [2, 2, 2]
