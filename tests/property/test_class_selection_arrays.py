"""Algorithm 1 over the class table's arrays (issue 29) computes, for every class, exactly the
§4.1 headroom of the per-class definitions (`headroom_fraction`, `headroom_containers`), and
the line-6 weight; any random table of classes (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harvester.decisions.class_selection import (
    DEFAULT_WEIGHTS, ClassState, ClassTable, JobDemand, _rooms, headroom_containers, headroom_fraction, select_classes,
)
from harvester.domain import Resources
from harvester.models.job_history import JobType
from harvester.models.patterns import Pattern

fractions = st.floats(-0.5, 1.5, allow_nan=False)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 30))
    return [ClassState(f"c{i:02d}", draw(st.sampled_from(list(Pattern))), draw(fractions), draw(fractions), draw(fractions),
                       Resources(draw(st.integers(0, 10**6)), draw(st.integers(0, 5000))),
                       Resources(0, draw(st.integers(0, 2000))), draw(st.floats(0, 0.6)),
                       draw(st.one_of(st.none(), st.floats(0, 10**6))), nodes=1) for i in range(n)]


@settings(max_examples=300, deadline=None)
@given(tables(), st.sampled_from(list(JobType)), st.integers(1, 8), st.integers(1, 8192), st.integers(1, 3000))
def test_table_rooms_are_the_definitions(classes, job_type, vcores, memory_mb, req) -> None:
    container = Resources(memory_mb, vcores)
    job = JobDemand("j", job_type, req, container, "r")
    table = ClassTable.of(classes)
    fracs, rooms = _rooms(job, table)
    for k, c in enumerate(table.classes):
        assert fracs[k] == headroom_fraction(job_type, c)
        assert rooms[k] == headroom_containers(job_type, c, container)
    sel = select_classes(job, classes, np.random.default_rng(3))
    for ch in sel.choices:
        c = next(x for x in classes if x.class_id == ch.class_id)
        assert ch.headroom_containers == headroom_containers(job_type, c, container)
        assert ch.weighted_headroom == ch.headroom_containers * DEFAULT_WEIGHTS[job_type][c.pattern]
        assert 0 < ch.containers <= ch.headroom_containers
    assert sum(ch.containers for ch in sel.choices) in (0, req)
