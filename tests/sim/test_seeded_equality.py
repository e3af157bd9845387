"""Seeded runs give the numbers recorded before the simulator's speed-ups (issue 29).

The figures below were recorded from main at 561708b, before the engine, substrate and
policy fast paths (one-node sharing in Python floats, incremental free capacity, cheaper
heartbeat order, ...): a speed-up must not change a single job's start or finish, a kill, or
a utilization row. `sha` is the sha256 (first 16 hex digits) of `repr((jobs, utilization))`,
every job's (id, start, finish, attempts, kills, wasted CPU-s) and every utilization row;
the summary's figures are compared exactly, except `events`: a node's finish that moves
later no longer queues another engine event (the queued one re-arms when it comes up), so
fewer superseded events are popped; that count is engine work, not a simulated outcome, and
is pinned separately (EVENTS_NOW). Scenarios: the benchmark's scenario at 400
servers (stock YARN sharing cores, strict priority, primary-aware with RM over-commit
kills, OSDI'16 reimages), the substrate's own kill (`reaction_delay_s`), the two small
example scenarios, and the Algorithm 1 mechanism scenario with Harvester's live loops.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable

import pytest

from harvester.sim.metrics.report import summarize
from harvester.sim.scenario import load_scenario, parse_scenario
from harvester.sim.simulation import RunResult, Simulation

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "deploy" / "scenarios"
NO_OUTPUTS = {"outputs.plots": False, "outputs.csv": False}


def bench(n: int, policy: str, **extra: Any) -> RunResult:
    over = {"cluster.servers": n, "tenants.count": n // 20, "workload.synthetic.jobs": n // 2, "policy.name": policy,
            **NO_OUTPUTS, **extra}
    if policy != "primary-aware":
        over["policy.params"] = {}
    return Simulation(load_scenario(SCENARIOS / "bench-10k.yaml", over), base_dir=SCENARIOS).run()


def tiny(**over: Any) -> RunResult:
    data: dict[str, Any] = {
        "name": "tiny", "seed": 3, "duration_s": 7200, "drain_s": 1800, "start_time": 1375315200,
        "cluster": {"servers": 30, "cores": 8},
        "tenants": {"count": 5, "history_s": 3600,
                    "mean_utilization": {"periodic": 0.5, "constant": 0.4, "unpredictable": 0.3}},
        "workload": {"synthetic": {"jobs": 40, "max_tasks_per_stage": 20}, "target_utilization": 0.5,
                     "allow_rescaled_durations": True},
        "policy": {"name": "stock-yarn"}, "substrate": {"reaction_delay_s": 5},
        "outputs": {"plots": False, "csv": False},
    }
    data.update(over)
    return Simulation(parse_scenario(data)).run()


def scenario(name: str, **over: Any) -> RunResult:
    return Simulation(load_scenario(SCENARIOS / name, {**NO_OUTPUTS, **over}), base_dir=SCENARIOS).run()


RUNS: dict[str, Callable[[], RunResult]] = {
    "bench400_stock": lambda: bench(400, "stock-yarn"),
    "bench400_aware": lambda: bench(400, "primary-aware"),
    "bench400_stock_strict": lambda: bench(400, "stock-yarn", **{"substrate.primary_weight": None}),
    "tiny_stock_kill": lambda: tiny(),
    "tiny_aware": lambda: tiny(policy={"name": "primary-aware"}),
    "small_stock": lambda: scenario("small-stock-yarn.yaml"),
    "small_aware": lambda: scenario("small-primary-aware.yaml"),
    "alg1_live": lambda: scenario("mechanism-alg1.yaml", duration_s=7200, drain_s=3600),
}

KEYS = ("jobs_finished", "task_attempts", "task_kills", "events", "scheduling_passes", "job_time_mean_s",
        "wasted_cpu_hours", "harvested_cpu_hours", "primary_not_served_core_hours", "batch_slowed_core_hours",
        "overflow_node_hours", "reimages")

# recorded at 561708b (before the speed-ups); values in the order of KEYS
RECORDED: dict[str, tuple[str, tuple[Any, ...]]] = {
    "bench400_stock": ("c04cda13e30db3ba",
        (152, 33412, 16, 59957, 2028, 6596.9634522767665, 59.85112768914964, 12182.668005356869, 1373.9152039142816, 3600.8423222643783, 1200.5281492153804, 3)),
    "bench400_aware": ("47ed0a1b66238a83",
        (152, 34517, 967, 36975, 2462, 6570.893947207949, 732.7133732440075, 13406.591543898123, 0.0, 0.0, 0.0, 3)),
    "bench400_stock_strict": ("412448ac6943bb0a",
        (151, 33413, 19, 59503, 2023, 6571.829710398799, 127.25516001052327, 10396.477195067153, 0.0, 6217.235752889005, 0.0, 3)),
    "tiny_stock_kill": ("3e5f6aaf0477f694",
        (36, 23129, 19061, 18930, 1768, 1072.5828742778017, 18.61661706149578, 129.81272137980255, 6.599434121885952, 15.549603435484622, 7.614447515077061, 0)),
    "tiny_aware": ("482ef3949100f235",
        (36, 4078, 8, 7132, 1279, 1052.778628381992, 0.21694444444444444, 130.0042869965253, 0.0, 0.0, 0.0, 0)),
    "small_stock": ("90e047b7e487ce26",
        (282, 81533, 0, 92863, 3308, 2114.66997492948, 0.0, 3873.0869681187037, 300.84531220235107, 679.0723967184023, 226.7081241380506, 0)),
    "small_aware": ("c94fabc4c6019c08",
        (279, 82620, 818, 90473, 3416, 1944.3752273236903, 114.88583333333334, 3897.5336859040367, 0.0, 0.0, 0.0, 0)),
    "alg1_live": ("af1a4ac74ee51f34",
        (36, 1305, 12, 2884, 85, 2146.4772208867357, 0.782416929602623, 363.50116110824536, 0.014754032008357064, 0.013837094857453753, 0.01611111111111111, 0)),
}

# engine events after "a later finish re-arms the queued event" (the simulated numbers above unchanged)
EVENTS_NOW = {"bench400_stock": 39772, "bench400_aware": 36880, "bench400_stock_strict": 39974, "tiny_stock_kill": 13738, "tiny_aware": 7132, "small_stock": 90310, "small_aware": 90428, "alg1_live": 2876}


def fingerprint(result: RunResult) -> tuple[str, tuple[Any, ...]]:
    s = summarize(result)
    jobs = [(j.job_id, j.start_s, j.finish_s, j.attempts, j.kills, j.wasted_cpu_s) for j in result.stats.jobs]
    sha = hashlib.sha256(repr((jobs, result.stats.utilization)).encode()).hexdigest()[:16]
    return sha, tuple(s[k] for k in KEYS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_seeded_run_gives_the_numbers_recorded_before_the_speedups(name: str) -> None:
    sha, values = fingerprint(RUNS[name]())
    want_sha, want = RECORDED[name]
    got, rec = dict(zip(KEYS, values)), dict(zip(KEYS, want))
    assert got.pop("events") == EVENTS_NOW[name] <= rec.pop("events")
    assert got == rec
    assert sha == want_sha, "same summary, but a job's times or a utilization row changed"
