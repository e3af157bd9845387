"""The Phoenix short-job simulator's core on hand-checked schedules (late binding, SRPT,
sticky batch probing, FIFO, relaxation slowdowns) — tiny clusters, exact times."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.models.constraints import NodeTable, Strength, parse_constraint
from harvester.sim.phoenix.cluster import Workers, synthesize_workers
from harvester.sim.phoenix.engine import PROBE, TASK, Simulation, slowdowns
from harvester.sim.phoenix.phoenix_policy import PhoenixC
from harvester.sim.phoenix.policies import EagleC, FifoC, HawkC, SparrowC
from harvester.sim.phoenix.synthesis import JobConstraints
from harvester.sim.phoenix.workload import Trace, TraceJob

RTT = 0.0


def workers(*attrs: dict) -> Workers:
    full = [{"rack": f"/r{i}", **a} for i, a in enumerate(attrs)]
    return Workers(NodeTable([f"w{i}" for i in range(len(full))], full), np.arange(len(full)), tuple(full))


def trace(*jobs: tuple[float, list[float], bool]) -> Trace:
    return Trace("t", tuple(TraceJob(f"j{i}", a, np.array(d, dtype=float), long) for i, (a, d, long) in enumerate(jobs)), 1.0)


def responses(sim: Simulation) -> list[float]:
    return [round(j.response_s, 6) for j in sim.run().jobs]


def test_fifo_serves_jobs_in_arrival_order_on_any_free_worker() -> None:
    # 1 worker; j0 (two 10 s tasks) at 0, j1 (one 1 s task) at 1: FIFO runs j0 first.
    sim = Simulation(trace((0.0, [10, 10], False), (1.0, [1], False)), workers({}), [JobConstraints()] * 2, FifoC(),
                     seed=0, rtt_s=RTT)
    assert responses(sim) == [20.0, 20.0]


def test_fifo_skips_a_job_the_free_worker_cannot_serve() -> None:
    # w0 is arm, w1 x86. j0 needs arm (two 10 s tasks), j1 any (one 5 s task): j1 runs on w1 at once.
    arm = JobConstraints((parse_constraint("isa=aarch64"),), types=("Architecture (ISA)",))
    sim = Simulation(trace((0.0, [10, 10], False), (0.0, [5], False)), workers({"isa": "aarch64"}, {"isa": "x86_64"}),
                     [arm, JobConstraints()], FifoC(), seed=0, rtt_s=RTT)
    assert responses(sim) == [20.0, 5.0]


def test_late_binding_a_probe_reached_after_the_job_is_done_is_wasted_and_costs_a_round_trip() -> None:
    # Sparrow-C, 2 workers, one job of 1 task: 2 probes; the second finds nothing left.
    sim = Simulation(trace((0.0, [4], False)), workers({}, {}), [JobConstraints()], SparrowC(min_probes=0), seed=0, rtt_s=0.5)
    result = sim.run()
    assert result.probes == 2 and result.wasted_probes == 1
    assert result.jobs[0].response_s == pytest.approx(4.5), "one round trip before the task starts"


def test_srpt_serves_the_job_with_least_remaining_work_first() -> None:
    # One worker busy with j0 (10 s) when j1 (two 5 s tasks, remaining 10 s) and j2 (one 1 s task)
    # queue probes; SRPT serves j2 before j1 although j1 came first.
    sim = Simulation(trace((0.0, [10], False), (1.0, [5, 5], False), (2.0, [1], False)), workers({}),
                     [JobConstraints()] * 3, EagleC(), seed=0, rtt_s=RTT)
    assert responses(sim) == [10.0, 20.0, 9.0]


def test_eagle_serves_early_bound_long_tasks_before_short_probes() -> None:
    # 1 worker: long j0 runs 0-100; short j1's probe (t=1) and long j2's task (t=2) wait; the Eagle
    # simulator's queue scan takes the first long entry before any short probe: j2 100-200, j1 200-201.
    sim = Simulation(trace((0.0, [100], True), (1.0, [1], False), (2.0, [100], True)), workers({}),
                     [JobConstraints()] * 3, EagleC(min_probes=0), seed=0, rtt_s=RTT)
    assert responses(sim) == [100.0, 200.0, 198.0]


def test_fifo_worker_queues_of_sparrow_keep_arrival_order() -> None:
    sim = Simulation(trace((0.0, [10], False), (1.0, [5, 5], False), (2.0, [1], False)), workers({}),
                     [JobConstraints()] * 3, SparrowC(), seed=0, rtt_s=RTT)
    assert responses(sim) == [10.0, 19.0, 19.0]


def _queue_sim() -> Simulation:
    # A: three 5 s tasks (remaining 15 s), B: one 1 s task, L: a long job
    jobs = trace((0.0, [5, 5, 5], False), (0.0, [1], False), (0.0, [100], True))
    return Simulation(jobs, workers({}), [JobConstraints()] * 3, EagleC(), seed=0, rtt_s=RTT)


@pytest.mark.parametrize(("cap", "queue", "chosen", "charged"), [
    (5.0, [[0, PROBE, 0.0, False], [1, PROBE, 0.0, False]], 1, 1.0),    # SRPT: B passes A (1 <= slack 5 x 5)
    (5.0, [[0, PROBE, 24.5, False], [1, PROBE, 0.0, False]], 0, 24.5),  # A's slack 25 - 24.5 < 1: B may not pass
    (0.0, [[0, PROBE, 0.0, False], [1, PROBE, 0.0, False]], 0, 0.0),    # cap 0: nobody passes
    (5.0, [[1, PROBE, 0.0, False], [0, PROBE, 0.0, False]], 0, 0.0),    # B already first
    (5.0, [[0, PROBE, 0.0, False], [1, PROBE, 0.0, False], [2, TASK, 0.0, False]], 2, 0.0),  # a long entry first, no charge
])
def test_eagle_srpt_with_the_slack_starvation_bound(cap: float, queue: list, chosen: int, charged: float) -> None:
    sim = _queue_sim()
    assert EagleC(cap=cap).pick(sim, 0, queue) == chosen
    assert queue[0][2] == charged, "the passed probe is charged the chosen task's estimate"


def test_sticky_batch_probing_keeps_the_probe_in_the_queue_where_it_competes_again() -> None:
    # Eagle-C, 1 worker: A (two 5 s tasks) at 0, B (one 1 s task) at 1. A's probe binds 0-5 and
    # stays; at 5 it competes again with B's probe and SRPT serves B (1 s left < A's 5 s): B 5-6,
    # A 6-11. The three unused probes of A and one of B are dropped without a round trip.
    sim = Simulation(trace((0.0, [5, 5], False), (1.0, [1], False)), workers({}), [JobConstraints()] * 2,
                     EagleC(min_probes=0), seed=0, rtt_s=RTT)
    result = sim.run()
    assert [j.response_s for j in result.jobs] == [11.0, 5.0] and result.wasted_probes == 4
    one_job = Simulation(trace((0.0, [2, 2, 2], False)), workers({}), [JobConstraints()], EagleC(min_probes=0), seed=0,
                         rtt_s=0.5).run()
    assert one_job.jobs[0].response_s == pytest.approx(7.5), "the probe binds all three tasks, 0.5 s round trip each"


def test_long_jobs_are_bound_early_to_the_least_loaded_general_workers() -> None:
    ws = workers({}, {}, {})
    sim = Simulation(trace((0.0, [100, 100, 100, 100], True)), ws, [JobConstraints()], EagleC(), seed=0, rtt_s=RTT,
                     short_partition=0.34)
    result = sim.run()
    assert int(sim.short_only.sum()) == 1
    assert result.jobs[0].response_s == 200.0, "4 tasks over the 2 general workers: two waves"


def _sss_sim() -> Simulation:
    # A (long, any worker) at 0 -> w0; B (long, b=1) at 1 -> w2; C (short, a=1, two 1 s tasks) at 2
    ws = workers({"a": "1", "b": "0"}, {"a": "0", "b": "0"}, {"a": "1", "b": "1"}, {"a": "1", "b": "0"})
    specs = [JobConstraints(), JobConstraints((parse_constraint("b=1"),), ("x",)), JobConstraints((parse_constraint("a=1"),), ("x",))]
    return Simulation(trace((0.0, [100], True), (1.0, [100], True), (2.0, [1, 1], False)), ws, specs,
                      EagleC(min_probes=0), seed=0, rtt_s=RTT)


def test_sss_workers_hold_the_bitmap_of_their_last_long_task_and_rejected_probes_are_resampled() -> None:
    sim = _sss_sim()
    result = sim.run()
    t0, first = sim.snapshots[sim.snapshot_of[0]]
    t1, second = sim.snapshots[sim.snapshot_of[2]]
    assert (t0, first.tolist()) == (0.0, [True, False, False, False]), "w0 does not know of B on w2"
    assert (t1, second.tolist()) == (1.0, [True, False, True, False])
    # C's 4 probes cover w0, w2 (both reject: long work) and w3; the rejected ones are resampled
    # among a=1 workers the freshest snapshot (w2's) leaves free: w3 only. C runs 2-3, 3-4 on w3.
    assert result.jobs[2].response_s == 2.0 and result.probes == 4 and not sim.queue[0] and not sim.queue[2]


def test_sss_falls_back_to_the_short_only_partition_when_every_general_worker_holds_long_work() -> None:
    ws = workers({}, {}, {})
    sim = Simulation(trace((0.0, [100, 100], True), (1.0, [1], False)), ws, [JobConstraints()] * 2,
                     EagleC(min_probes=0), seed=0, rtt_s=RTT, short_partition=0.34)
    result = sim.run()
    assert result.jobs[1].response_s == 1.0, "the short job never waits behind the long tasks"


def _hawk_sim(policy: HawkC) -> Simulation:
    # jobs 0-5 with one 1 s task each; worker 0 is the thief, worker 1 the victim
    return Simulation(trace(*[(0.0, [1], False)] * 6), workers({}, {}), [JobConstraints()] * 6, policy, seed=0, rtt_s=RTT)


@pytest.mark.parametrize(("running_long", "queue", "stolen", "left"), [
    # the ATC strategy: skip the head's short probes, skip the long entries, take what follows
    (False, [(0, PROBE), (5, TASK), (1, PROBE), (2, PROBE), (5, TASK), (3, PROBE)], [1, 2], [0, 5, 5, 3]),
    # a victim running a long task gives its head's short probes too
    (True, [(0, PROBE), (1, PROBE), (5, TASK), (2, PROBE)], [0, 1], [5, 2]),
    (False, [(0, PROBE), (1, PROBE)], [], [0, 1]),  # nothing queued behind long work
])
def test_hawk_steals_short_probes_queued_after_long_work(running_long: bool, queue: list, stolen: list, left: list) -> None:
    policy = HawkC()
    sim = _hawk_sim(policy)
    sim.running_early[1] = running_long
    sim.queue[1] = [[j, kind, 0.0, False] for j, kind in queue]
    policy.pull(sim, 0)
    assert [e[0] for e in sim.queue[0]] == stolen and [e[0] for e in sim.queue[1]] == left
    assert policy.stolen == len(stolen)


def test_hawk_steals_only_probes_whose_constraints_the_thief_meets() -> None:
    ws = workers({"a": "1"}, {"a": "1"}, {"a": "0"})
    pinned = JobConstraints((parse_constraint("a=1"),), ("x",))
    policy = HawkC()
    sim = Simulation(trace(*[(0.0, [1], False)] * 3), ws, [pinned, JobConstraints(), JobConstraints()], policy, seed=0)
    sim.queue[1] = [[2, TASK, 0.0, False], [0, PROBE, 0.0, False], [1, PROBE, 0.0, False]]
    for _ in range(20):  # the victim is random: ask until worker 1 was asked
        policy.pull(sim, 2)
        if sim.queue[2]:
            break
    assert [e[0] for e in sim.queue[2]] == [1], "worker 2 (a=0) may not take job 0's probe"
    assert [e[0] for e in sim.queue[1]] == [2, 0]


def test_a_job_sends_twice_its_tasks_in_probes_and_at_least_twenty() -> None:
    ws = workers(*[{}] * 50)
    one = Simulation(trace((0.0, [1], False)), ws, [JobConstraints()], SparrowC(), seed=0, rtt_s=RTT).run()
    many = Simulation(trace((0.0, [1] * 15, False)), ws, [JobConstraints()], SparrowC(), seed=0, rtt_s=RTT).run()
    assert (one.probes, many.probes) == (20, 30)


def test_relaxed_soft_constraints_slow_tasks_by_the_clock_and_nic_model() -> None:
    ws = workers({"clock_ghz": "2.0", "nic_gbps": "10"}, {"clock_ghz": "4.0", "nic_gbps": "100"}, {"nic_gbps": "10"})
    soft = (parse_constraint("clock_ghz>=4", Strength.SOFT), parse_constraint("nic_gbps>=100", Strength.SOFT))
    # w0: clock 4/2 = 2x, NIC 0.8 + 0.2·100/10 = 2.8x -> 5.6x; w1 meets both; w2 has no clock: NIC only
    assert slowdowns(soft, ws).tolist() == pytest.approx([5.6, 1.0, 2.8])


def test_a_job_no_worker_can_run_is_refused() -> None:
    spec = JobConstraints((parse_constraint("gpu=1"),), types=("x",))
    with pytest.raises(ValueError, match="no worker satisfies gpu=1"):
        Simulation(trace((0.0, [1], False)), workers({}), [spec], EagleC(), seed=0)


@pytest.mark.parametrize("rule", ["sss", "mg1"])
def test_phoenix_relaxes_a_soft_constraint_whose_workers_hold_long_work(rule: str) -> None:
    # w0 (fast) is held by a long job; a short job that prefers fast clocks arrives: its full class
    # has no worker free of long work (M/G/1 wait infinite), the hard-only class has w1 -> relaxed.
    ws = workers({"clock_ghz": "3.0"}, {"clock_ghz": "2.0"})
    fast = JobConstraints((parse_constraint("clock_ghz>=3", Strength.SOFT),), types=("CPU Clock Speed",))
    long_on_fast = JobConstraints((parse_constraint("clock_ghz>=3"),), types=("CPU Clock Speed",))
    policy = PhoenixC(tick_s=1.0, admission=rule)
    sim = Simulation(trace((0.0, [1000], True), (5.0, [10], False)), ws, [long_on_fast, fast], policy, seed=0, rtt_s=RTT)
    result = sim.run()
    assert policy.relaxed_jobs == 1 and result.jobs[1].relaxed
    assert result.jobs[1].response_s == pytest.approx(15.0), "10 s at 3.0 GHz wanted, run at 2.0 GHz: 15 s"
    eagle = Simulation(trace((0.0, [1000], True), (5.0, [10], False)), ws, [long_on_fast, fast], EagleC(), seed=0,
                       rtt_s=RTT).run()
    assert eagle.jobs[1].response_s == pytest.approx(1005.0), "Eagle-C waits behind the long task"


def test_phoenix_keeps_soft_constraints_while_a_satisfying_worker_is_free_of_long_work() -> None:
    # w0 and w1 fast, w0 held by a long job, w1 free: "all the constraints" can be satisfied.
    ws = workers({"clock_ghz": "3.0"}, {"clock_ghz": "3.0"}, {"clock_ghz": "2.0"})
    fast = JobConstraints((parse_constraint("clock_ghz>=3", Strength.SOFT),), types=("CPU Clock Speed",))
    pinned = JobConstraints((parse_constraint("clock_ghz>=3"),), types=("CPU Clock Speed",))
    policy = PhoenixC(tick_s=1.0)
    sim = Simulation(trace((0.0, [1000], True), (5.0, [10], False)), ws, [pinned, fast], policy, seed=0, rtt_s=RTT)
    result = sim.run()
    assert policy.relaxed_jobs == 0 and result.jobs[1].response_s == pytest.approx(10.0)


def _phoenix_queue_sim(policy: PhoenixC) -> Simulation:
    # j0: three 1 s tasks, j1: one 1 s task
    return Simulation(trace((0.0, [1, 1, 1], False), (0.0, [1], False)), workers({}, {}), [JobConstraints()] * 2, policy,
                      seed=0, rtt_s=RTT)


@pytest.mark.parametrize(("crv_mode", "crv", "chosen"), [
    (True, {0: 0.5, 1: 2.0}, 1),   # the higher CRV ratio first
    (True, {0: 2.0, 1: 0.5}, 0),
    (True, {0: 1.0, 1: 1.0}, 0),   # equal ratios: the earlier probe (the source), though SRPT would take j1
    (False, {0: 2.0, 1: 0.5}, 1),  # load at or below 80%: Eagle's SRPT
])
def test_phoenix_serves_the_probe_with_the_highest_crv_ratio_while_the_cluster_is_busy(crv_mode, crv, chosen) -> None:
    policy = PhoenixC()
    sim = _phoenix_queue_sim(policy)
    sim.jobs[1].cls = 1
    policy.crv_mode, policy.crv = crv_mode, crv
    q = [[0, PROBE, 0.0, False], [1, PROBE, 0.0, False]]
    assert policy.pick(sim, 0, q) == chosen
    assert q[0][2] == (1.0 if chosen == 1 else 0.0), "the passed probe is charged, as in Eagle"


def test_crv_is_demand_over_supply_free_of_long_work_of_the_tightest_dimension() -> None:
    # w0, w1 have 32 cores, w2, w3 16; w0 holds long work. A asks cores>=32 (3 tasks not started),
    # B nothing (2 tasks). cores>=32: 3 / 1 (w1) = 3; any worker: 5 / 3 free.
    ws = workers({"cores": "32"}, {"cores": "32"}, {"cores": "16"}, {"cores": "16"})
    big = JobConstraints((parse_constraint("cores>=32"),), ("Number of Cores",))
    policy = PhoenixC(admission=None, placement=False)
    sim = Simulation(trace((0.0, [1, 1, 1], False), (0.0, [1, 1], False)), ws, [big, JobConstraints()], policy, seed=0)
    policy.active = list(sim.jobs)
    sim.long_count[0] = 1
    sim.busy = 4
    policy.tick(sim)
    assert policy.crv[sim.jobs[0].cls] == pytest.approx(3.0)
    assert policy.crv[sim.jobs[1].cls] == pytest.approx(5 / 3)
    assert policy.crv_mode, "4 of 4 workers busy > 80%"
    sim.busy = 3
    policy.tick(sim)
    assert not policy.crv_mode, "75% busy: Eagle's SRPT"
