"""The differential sequence (diff_sequence.py) against the emulator, judged by the captures.

tests/integration/test_differential.py sends the same sequence to a live RM and to the
emulator and compares the two; here, without a live RM, each emulated answer is compared with
the recorded answer of the same form (the step's capture) by the same comparator.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from diff_sequence import SEQUENCE, run
from emu_world import World, load_capture
from shape import Answer, compare_answers

from harvester.emulator.render_common import ms

TS = 1795420810582


@pytest.fixture(scope="module")
def answers() -> dict[str, Answer]:
    world = World(TS)
    world.at(60.0)
    try:
        return {step.capture: ans for step, ans in run(world.send, lambda: ms(world.clock.now()))}
    finally:
        world.close()


@pytest.mark.parametrize("capture", [s.capture for s in SEQUENCE])
def test_emulator_answer_has_the_recorded_form(capture: str, answers: dict[str, Answer], fixtures_dir: Path) -> None:
    recorded = load_capture(fixtures_dir / "yarn-3.3.6" / "captures", capture).answer
    assert compare_answers(recorded, answers[capture]) == []


def test_sequence_captures_are_distinct() -> None:
    names = [s.capture for s in SEQUENCE]
    assert len(names) == len(set(names))
