"""Inputs of the Phoenix evaluation: synthetic workers, Table II constraints, the Yahoo trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harvester.models.constraints import Strength
from harvester.sim.phoenix.cluster import ATTRIBUTE_MIX, synthesize_workers
from harvester.sim.phoenix.synthesis import TABLE_II, frequencies, synthesize
from harvester.sim.phoenix.workload import load_trace

YH1 = Path("hawk-eagle-shortjob-subtraces") / "YH1_sub.tr.gz"


def test_workers_follow_the_attribute_mix_and_racks() -> None:
    w = synthesize_workers(20000, seed=7, per_rack=40)
    assert w.size == 20000 and w.rack[39] == 0 and w.rack[40] == 1
    codes, uniques = w.table.codes("isa")
    share = {u: float(np.mean(codes == i)) for i, u in enumerate(uniques)}
    assert share == pytest.approx(dict(zip(*ATTRIBUTE_MIX["isa"])), abs=0.01)
    assert synthesize_workers(50, seed=7).attributes == synthesize_workers(50, seed=7).attributes


def test_constraints_follow_table_ii_and_are_satisfiable() -> None:
    w = synthesize_workers(3000, seed=1)
    jobs = synthesize(6000, w, seed=2, constrained_fraction=0.5)
    constrained = [j for j in jobs if j.constrained]
    assert len(constrained) / len(jobs) == pytest.approx(0.5, abs=0.03)
    freq = frequencies(jobs)
    # equal weights: each type on ~ 0.5 x E[types per job] / 9 of the jobs
    expected = 0.5 * (0.70 * 1 + 0.25 * 2 + 0.05 * 3) / len(TABLE_II)
    assert all(abs(f - expected) < 0.02 for f in freq.values()), freq
    for j in constrained:
        assert w.table.mask_all(j.constraints).any(), "hard and soft together are satisfiable"
        strengths = {c.attribute: c.strength for c in j.constraints}
        assert strengths.get("clock_ghz", Strength.SOFT) is Strength.SOFT
        assert strengths.get("isa", Strength.HARD) is Strength.HARD
        assert j.spread == ("Number of Nodes" in j.types)
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
