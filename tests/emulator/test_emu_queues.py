"""The emulated queue tree's validation and its construction from a live RM's /scheduler answer
(harvester/emulator/queues.py), against the recorded 3.3.6 captures."""

from __future__ import annotations

import copy
import json

import pytest

from harvester.emulator.queues import QueueConfig, QueueTree, queues_from_scheduler
from shared_paths import FIXTURES_DIR

CAPTURES = FIXTURES_DIR / "yarn-3.3.6" / "captures"


@pytest.mark.parametrize("capacities", [
    (70.0, 30.000002),            # what the live RM's /scheduler shows for a 70/30 split (float32 percent)
    (69.98, 30.0),                # 0.02 points short: still within the RM's 0.05 % precision
    (33.333, 33.333, 33.333),     # thirds written with three decimals
])
def test_capacities_summing_to_100_within_the_rms_precision_are_accepted(capacities) -> None:
    configs = tuple(QueueConfig(f"q{i}", c, reservable=i == 0) for i, c in enumerate(capacities))
    tree = QueueTree(configs)
    assert sorted(tree.configs) == [f"q{i}" for i in range(len(capacities))]


@pytest.mark.parametrize("capacities", [(70.0, 29.9), (50.0, 50.1), (0.0, 0.0)])
def test_capacities_off_by_more_than_the_rms_precision_are_refused_as_it_refuses_them(capacities) -> None:
    with pytest.raises(ValueError, match=r"Illegal capacity sum of .* for children of queue root"):
        QueueTree(tuple(QueueConfig(f"q{i}", c) for i, c in enumerate(capacities)))


def _scheduler(name: str) -> dict:
    return json.loads((CAPTURES / f"{name}.json").read_text())


def test_the_recorded_scheduler_gives_its_one_reservable_queue() -> None:
    (q,) = queues_from_scheduler(_scheduler("scheduler"))
    assert (q.name, q.capacity, q.max_capacity, q.reservable) == ("default", 100.0, 100.0, True)


def test_a_live_split_with_float_noise_builds_a_tree() -> None:
    """The recorded answer, re-shaped into the live cluster's layout: a 70 % plan queue and a
    30 % plain queue that the RM reports as 30.000002."""
    doc = _scheduler("scheduler-with-active-reservation")
    queues = doc["scheduler"]["schedulerInfo"]["queues"]["queue"]
    queues = queues if isinstance(queues, list) else [queues]
    plan = queues[0]
    plain = copy.deepcopy(plan)
    plain.update(queueName="batch", capacity=30.000002, maxCapacity=100.0, hideReservationQueues=False)
    plain.pop("queues", None)
    plan["capacity"] = 70.0
    doc["scheduler"]["schedulerInfo"]["queues"]["queue"] = [plan, plain]
    configs = queues_from_scheduler(doc)
    assert [(c.name, c.capacity, c.reservable) for c in configs] == [("default", 70.0, True), ("batch", 30.000002, False)]
    tree = QueueTree(configs)
    assert tree.plan_queue().name == "default" and tree.leaf("root.batch") is not None


def test_a_nested_layout_is_named_not_flattened() -> None:
    doc = _scheduler("scheduler")
    (q,) = doc["scheduler"]["schedulerInfo"]["queues"]["queue"]
    q["hideReservationQueues"] = False
    q["queues"]["queue"][0]["queueName"] = "root.default.etl"
    with pytest.raises(ValueError, match=r"root\.default has child queues \(root\.default\.etl\)"):
        queues_from_scheduler(doc)
    with pytest.raises(ValueError, match="not a CapacityScheduler answer"):
        queues_from_scheduler({"scheduler": {"schedulerInfo": {"type": "fifoScheduler"}}})
