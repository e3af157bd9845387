"""The Resource Estimator's history semantics (harvester.models.estimator_history): the parser's
runs, the solver's input, the Gson rendering."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.domain import Resources
from harvester.models.estimator_history import (
    LogLineError,
    RecurrenceId,
    ResourceSkyline,
    TooLong,
    containers_per_step,
    estimate_allocation,
    gson,
    history_document,
    log_lines,
    parse_native_log,
)


def test_lines_of_one_run_are_kept_as_a_list_and_added_up_for_the_solver() -> None:
    runs = parse_native_log(["p 2 0 0 0 r1 1024:1| 2:0|3:5|", "", "p 1 0 0 0 r1 1024:1| 4:5|",
                             "p 1 0 0 0 r2 1024:1| 0:0|1:5|1:10|"], 5)
    assert [r for r, _ in runs] == [RecurrenceId("p", "r2"), RecurrenceId("p", "r1")]  # the parser's HashMap order
    r1 = dict(runs)[RecurrenceId("p", "r1")]
    assert [s.allocation for s in r1] == [((0, 2), (5, 3), (10, 0)), ((5, 4), (10, 0))]
    r2 = dict(runs)[RecurrenceId("p", "r2")][0]
    assert r2.allocation == ((5, 1), (15, 0)) and r2.finish_time == 15  # a unit of 0 adds nothing
    usage, box = containers_per_step(runs, 5, 100)
    assert box == Resources(1024, 1)
    assert usage.tolist() == [[1, 1], [2, 7]]  # each run from its first allocation, padded to the longest


def test_a_leading_blank_is_ignored() -> None:
    """(The Estimator's split("\\s+") would read an empty pipeline id, run "0" and 1,024 containers.)"""
    assert parse_native_log(["  p 2 0 0 0 r1 1024:1| 2:0|"], 5) == parse_native_log(["p 2 0 0 0 r1 1024:1| 2:0|"], 5)
    assert [r for r, _ in parse_native_log(["p\u00a0x 2 0 0 0 r1 1024:1| 2:0|"], 5)] == [RecurrenceId("p\u00a0x", "r1")]
    assert log_lines("a\r\nb\rc\u2028d\n") == ["a", "b", "c\u2028d"]  # readLine's line ends only


def test_a_run_too_long_to_solve() -> None:
    runs = parse_native_log(["p 2 0 0 0 r1 1024:1| 2:0|3:1000000|"], 5)
    with pytest.raises(TooLong, match="200001 steps"):
        containers_per_step(runs, 5, 100_000)


def test_skylines_of_other_container_sizes_count_in_the_first_ones() -> None:
    runs = [(RecurrenceId("p", "r"), [ResourceSkyline("a", Resources(2048, 1), ((0, 2), (5, 0))),
                                      ResourceSkyline("b", Resources(1024, 1), ((0, 3), (10, 0)))])]
    usage, box = containers_per_step(runs, 5, 100)
    assert box == Resources(2048, 1) and usage.tolist() == [[3.0, 1.0]]  # (4096 + 3072) // 2048, 3072 // 2048


def test_estimate_allocation_and_documents() -> None:
    alloc = estimate_allocation(np.array([0, 2, 2, 0, 1, 0]), 5)
    assert alloc == ((5, 2), (15, 0), (20, 1), (25, 0))
    assert history_document(None) is None and history_document([]) == {}
    doc = history_document([(RecurrenceId("p<&>", "r'="), [ResourceSkyline("j", Resources(1024, 1), ())])])
    assert gson(doc) == ('[[{"pipelineId":"p\\u003c\\u0026\\u003e","runId":"r\\u0027\\u003d"},[{"jobId":"j",'
                         '"jobInputDataSize":0.0,"jobSubmissionTime":0,"jobFinishTime":-1,'
                         '"containerSpec":{"memory":1024,"vcores":1},"skylineList":{"resourceAllocation":{}}}]]]').encode()
    assert gson({"s": "é\u2028"}) == '{"s":"é\\u2028"}'.encode()
