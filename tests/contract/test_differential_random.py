"""Seeded random REST sequences (harvester/emulator/sequences.py) against the emulator.

tests/integration/test_differential.py sends the same sequences to a live RM and to the
emulator and compares what the sequence determines. Here, without a live RM, the emulator's
answers are held to the recordings: each step's answer has the form of the capture it names
(status, body form, keys, value kinds), error texts are the recorded ones (digits aside), and
our own objects carry what we sent (queues, names, final states, reservation definitions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from emu_world import World, load_capture
from shape import Answer, compare_answers

from harvester.domain import Resources
from harvester.emulator import sequences as seq

TS = 1795420810582
SEEDS = (1, 2, 3, 4)
# answers whose form is the same whatever the cluster's state
FORM_STABLE = {s.name for s in seq.ERRORS} | {
    "new-application", "new-reservation", "reservation-submit", "reservation-update", "reservation-delete",
    "reservation-delete-again", "kill-app-again", "priority-in-reservable-queue", "reservation-submit-gang-too-large",
    "node-resource-nudge", "submit-app-valid", "submit-app-unknown-queue", "submit-app-short-queue"}
# what the sequence determines, where the named capture's facts are not the expected ones
EXPECTED: dict[str, dict[str, Any]] = {
    "signal-absent-container": {"status": 500, "text": seq.normalized(
        f"Trying to signal an absent container container_{TS}_9999_01_000001")},  # ClientRMService
    "reservation-delete-never-accepted": {"status": 400, "exception": "BadRequestException", "message": seq.normalized(
        "java.lang.Exception: The specified reservation with ID: reservation_1_10 is unknown. Please try again with "
        "a valid reservation.")},  # scenarios/recurring-reservation-update, t=483.784
    "submit-app-valid": {"status": 202}, "submit-app-unknown-queue": {"status": 202}, "submit-app-short-queue": {"status": 202},
    "get-app-valid": {"status": 200, "queue": "root.default", "name": "harvester-differential-valid"},
    "get-app-unknown-queue": {"status": 200, "queue": "harvester-differential-no-such-queue",
                              "name": "harvester-differential-unknown-queue", "state": "FAILED", "finalStatus": "FAILED",
                              "diagnostics": "Application application_#_# submitted by user root to unknown queue: "
                                             "harvester-differential-no-such-queue"},
    "get-app-short-queue": {"status": 200, "queue": "default", "name": "harvester-differential-short-queue",
                            "state": "FAILED", "finalStatus": "FAILED",
                            "diagnostics": "Application application_#_# submitted by user root to unknown queue: "
                                           "default-default"},
    "kill-app": {"status": 202}, "kill-app-again": {"status": 200, "body": {"state": "KILLED"}},
    "get-killed-app": {"status": 200, "queue": "root.default", "name": "harvester-differential-valid", "state": "KILLED",
                       "finalStatus": "KILLED", "diagnostics": "Application application_#_# was killed by user root"},
    "reservation-submit": {"status": 202, "body": ""}, "reservation-update": {"status": 200, "body": {}},
    "reservation-delete": {"status": 200, "body": {}}, "new-application": {"status": 200},
    "new-reservation": {"status": 200}, "node-resource-nudge": {"status": 200},
}


@pytest.fixture(scope="module")
def runs() -> dict[int, list[tuple[seq.Step, seq.Answer, dict[str, Any]]]]:
    out = {}
    for seed in SEEDS:
        world = World(TS, minimum=Resources(512, 1))  # the first recorded cluster granted 512 MB as such
        world.at(60.0)

        def send(m: str, p: str, h: dict[str, str], b: bytes) -> seq.Answer:
            if m != "GET":
                p += ("&" if "?" in p else "?") + "user.name=root"
            a = world.send(m, p, h, b)
            return seq.Answer(a.status, a.content_type, a.body)

        made = seq.new_vars()
        try:
            out[seed] = seq.run(send, seq.generate(seed, 45), lambda: int(world.clock.now() * 1000),
                                lambda s: world.clock.advance(s), made)
        finally:
            seq.cleanup(send, made)
            world.close()
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_answers_have_the_recorded_forms(seed: int, runs: dict, fixtures_dir: Path) -> None:  # type: ignore[type-arg]
    captures = fixtures_dir / "yarn-3.3.6" / "captures"
    problems = []
    for step, answer, _ in runs[seed]:
        if step.name in FORM_STABLE:
            recorded = load_capture(captures, step.capture).answer
            diffs = compare_answers(recorded, Answer(answer.status, answer.content_type, answer.body))
            if step.name in EXPECTED and "message" in EXPECTED[step.name] or step.name == "signal-absent-container":
                diffs = [d for d in diffs if "message" not in d and "plain text differs" not in d]
            problems += [f"{step.name}: {d}" for d in diffs]
    assert problems == []


@pytest.mark.parametrize("seed", SEEDS)
def test_what_the_sequence_determines_holds(seed: int, runs: dict, fixtures_dir: Path) -> None:  # type: ignore[type-arg]
    captures = fixtures_dir / "yarn-3.3.6" / "captures"
    problems = []
    for step, answer, facts in runs[seed]:
        if step.name in EXPECTED:
            want = EXPECTED[step.name]
        elif step in seq.ERRORS or step.name in ("priority-in-reservable-queue", "reservation-delete-again",
                                                 "reservation-submit-gang-too-large"):
            cap = load_capture(captures, step.capture).answer
            want = seq.error_facts(seq.Answer(cap.status, cap.content_type, cap.body))
        elif step.name.startswith("reservation-list"):
            names = {r[1] for r in facts.get("listed", [])}
            want_name = "harvester-differential-v2" if step.name.endswith("updated") else "harvester-differential"
            if facts["status"] != 200 or names != {want_name}:
                problems.append(f"{step.name}: {facts}")
            continue
        else:
            continue
        if facts != want:
            problems.append(f"{step.name}: got {facts}, want {want}")
    assert problems == []


def test_the_sequences_cover_every_kind_of_call() -> None:
    names = {s.name for seed in SEEDS for s in seq.generate(seed, 45)}
    assert {"submit-app-valid", "get-killed-app", "reservation-delete-again", "node-resource-nudge",
            "reservation-submit-gang-too-large"} <= names
    assert len(names & {s.name for s in seq.ERRORS}) >= 6
    assert seq.generate(7, 30) != seq.generate(8, 30) and [s.name for s in seq.generate(7, 30)] == [
        s.name for s in seq.generate(7, 30)]
