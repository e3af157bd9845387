"""Every evaluate command takes its lists the same way: spaces, commas, or both (one parser,
harvester/arglists.py)."""

from __future__ import annotations

import argparse

import pytest

from harvester.cli import build_parser
from harvester.sim.jockey.evaluate import build_parser as jockey_parser

CASES = [  # (argv before the list, flag, namespace attribute, values as text, expected)
    (["hdfs", "evaluate", "--traces", "t"], "--levels", "levels", ["0.25", "0.5"], [0.25, 0.5]),
    (["hdfs", "evaluate", "--traces", "t"], "--seeds", "seeds", ["0", "1", "2"], [0, 1, 2]),
    (["evaluate", "harvesting"], "--levels", "levels", ["0.5", "0.8"], [0.5, 0.8]),
    (["evaluate", "harvesting"], "--seeds", "seeds", ["1", "2"], [1, 2]),
    (["evaluate", "phoenix"], "--loads", "loads", ["1.5", "3"], [1.5, 3.0]),
    (["evaluate", "phoenix"], "--seeds", "seeds", ["1", "2", "3"], [1, 2, 3]),
    (["sweep", "--scenario", "s.yaml"], "--seeds", "seeds", ["4", "5"], [4, 5]),
]


def _parse(argv: list[str]) -> argparse.Namespace:
    if argv[:2] == ["evaluate", "jockey"]:
        return jockey_parser().parse_args(argv[2:])
    return build_parser().parse_args(argv)


@pytest.mark.parametrize(("before", "flag", "attr", "values", "expected"),
                         CASES + [(["evaluate", "jockey"], "--factors", "factors", ["2", "3.5"], [2.0, 3.5])])
def test_spaces_commas_and_both_give_the_same_list(before: list[str], flag: str, attr: str, values: list[str],
                                                   expected: list[object]) -> None:
    spaced = _parse([*before, flag, *values])
    commas = _parse([*before, flag, ",".join(values)])
    both = _parse([*before, flag, ",".join(values[:-1]) + ",", values[-1]]) if len(values) > 1 else commas
    assert getattr(spaced, attr) == getattr(commas, attr) == getattr(both, attr) == expected


def test_a_bad_value_is_a_usage_error_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["evaluate", "harvesting", "--levels", "0.5,lots"])
    assert exit_.value.code == 2
    assert "'0.5,lots'" in capsys.readouterr().err


def test_evaluate_jockey_hands_its_arguments_to_the_evaluation() -> None:
    args = build_parser().parse_args(["evaluate", "jockey", "--factors", "2", "3", "--job-count", "4"])
    assert args.args == ["--factors", "2", "3", "--job-count", "4"]
    parsed = jockey_parser().parse_args(args.args)
    assert parsed.factors == [2.0, 3.0] and parsed.job_count == 4
