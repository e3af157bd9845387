"""Inputs of the Phoenix evaluation: synthetic workers, Table II constraints, the Yahoo trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harvester.models.constraints import Strength
from harvester.sim.phoenix.cluster import ATTRIBUTE_MIX, synthesize_workers
from harvester.sim.phoenix.synthesis import CONSTRAINED_FRACTION, TABLE_II, frequencies, synthesize
from harvester.sim.phoenix.workload import load_trace

YH1 = Path("hawk-eagle-shortjob-subtraces") / "YH1_sub.tr.gz"


def test_workers_follow_the_attribute_mix_and_racks() -> None:
    w = synthesize_workers(20000, seed=7, per_rack=40)
    assert w.size == 20000 and w.rack[39] == 0 and w.rack[40] == 1
    codes, uniques = w.table.codes("disks")
    share = {u: float(np.mean(codes == i)) for i, u in enumerate(uniques)}
    assert share == pytest.approx(dict(zip(*ATTRIBUTE_MIX["disks"])), abs=0.01)
    assert synthesize_workers(50, seed=7).attributes == synthesize_workers(50, seed=7).attributes


# The Phoenix-derived simulator's worker share per Table II type (docs/evaluation/phoenix-fidelity.md, S1).
SUPPLY = {"Architecture (ISA)": 1.0, "Number of Cores": 0.60, "Maximum Disks": 0.20, "Minimum Disks": 0.45,
          "Number of Nodes": 0.75, "Kernel Version": 0.69, "CPU Clock Speed": 0.22, "Ethernet Speed": 0.58}


@pytest.mark.parametrize(("name", "share"), SUPPLY.items())
def test_each_table_ii_constraint_is_met_by_the_sources_share_of_workers(name: str, share: float) -> None:
    w = synthesize_workers(20000, seed=3)
    t = next(t for t in TABLE_II if t.name == name)
    assert float(np.mean(w.table.mask(t.constraint))) == pytest.approx(share, abs=0.012)


def test_source_chain_probabilities_sum_to_the_constrained_share() -> None:
    # enumerating the source's x, y in 1..100 if/elif chain gives these shares (7,881 of 10,000 draws)
    assert CONSTRAINED_FRACTION == pytest.approx(0.7881)
    assert {t.name: t.share for t in TABLE_II}["Minimum Disks"] == pytest.approx(0.089)
    assert {t.name: t.share for t in TABLE_II}["Platform Family"] == 0.0


def test_short_jobs_get_one_table_ii_type_at_the_sources_frequencies_and_long_jobs_none() -> None:
    w = synthesize_workers(3000, seed=1)
    n = 20000
    long = [i % 10 == 0 for i in range(n)]
    jobs = synthesize(n, w, seed=2, long=long)
    assert not any(j.constrained for j, lg in zip(jobs, long) if lg)
    short = [j for j, lg in zip(jobs, long) if not lg]
    assert all(len(j.constraints) <= 1 for j in short)
    assert sum(j.constrained for j in short) / len(short) == pytest.approx(CONSTRAINED_FRACTION, abs=0.015)
    freq = frequencies(short)
    for t in TABLE_II:
        assert freq[t.name] == pytest.approx(t.share, abs=0.012), t.name
    for j in short:
        for c in j.constraints:
            assert c.strength is (Strength.SOFT if c.attribute in ("clock_ghz", "nic_gbps") else Strength.HARD)
    assert synthesize(100, w, seed=2) == synthesize(100, w, seed=2)


def test_weights_shift_the_mix_and_bad_weights_are_refused() -> None:
    w = synthesize_workers(500, seed=1)
    only_isa = frequencies(synthesize(500, w, seed=3, constrained_fraction=1.0, weights={
        t.name: 0.0 for t in TABLE_II if t.name != "Architecture (ISA)"}))
    assert only_isa["Architecture (ISA)"] == 1.0 and only_isa["Number of Cores"] == 0.0
    with pytest.raises(ValueError, match="unknown Table II constraint types"):
        synthesize(1, w, seed=0, weights={"GPU": 1.0})
    with pytest.raises(ValueError, match="constrained_fraction"):
        synthesize(1, w, seed=0, constrained_fraction=1.5)
    with pytest.raises(ValueError, match="one long flag per job"):
        synthesize(2, w, seed=0, long=[True])


def test_yahoo_trace_split_and_load_scaling(traces_dir: Path) -> None:
    raw = load_trace(traces_dir / YH1, workers=15000, load=None)
    assert len(raw.jobs) == 2910 and sum(j.tasks for j in raw.jobs) == 122878
    short = [j for j in raw.jobs if not j.long]
    assert len(short) / len(raw.jobs) == pytest.approx(0.905, abs=0.005), "the 90.5 s cutoff: ~90% short jobs"
    assert raw.short_share == pytest.approx(0.0151, abs=0.0005)
    scaled = load_trace(traces_dir / YH1, workers=15000, load=1.5)
    assert scaled.load(15000) == pytest.approx(1.5) and scaled.time_scale == pytest.approx(1.5 / raw.load(15000))
    assert [j.tasks for j in scaled.jobs] == [j.tasks for j in raw.jobs], "only arrivals move"
    with pytest.raises(ValueError, match="load must be > 0"):
        load_trace(traces_dir / YH1, workers=10, load=0.0, limit=5)
