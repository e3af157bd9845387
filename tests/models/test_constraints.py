"""Constraint matching over node attributes (paper 003 §III-A): tables of node value x constraint."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harvester.models.constraints import (
    Constraint, ConstraintError, NodeTable, Op, PlacementConstraint, PlacementKind, Strength, parse_constraint,
)


@pytest.mark.parametrize(("value", "constraint", "expected"), [
    # equality: strings exactly, numbers as numbers
    ("x86_64", "isa=x86_64", True),
    ("aarch64", "isa=x86_64", False),
    ("X86_64", "isa=x86_64", False),
    ("10", "nic_gbps=10.0", True),
    ("10", "nic_gbps!=10", False),
    ("25", "nic_gbps!=10", True),
    # ordered: numbers
    ("16", "cores>8", True),
    ("8", "cores>8", False),
    ("8", "cores>=8", True),
    ("8", "cores<16", True),
    ("16", "cores<=16", True),
    ("32", "cores<=16", False),
    ("2.4", "clock_ghz>2.39", True),
    # ordered: dotted versions compare as integer tuples, not as strings or floats
    ("5.10", "kernel>5.4", True),
    ("5.4", "kernel>5.10", False),
    ("5.10.0-1160", "kernel>=5.10", True),
    ("4.19", "kernel<5", True),
    ("5.10", "kernel!=5.1", True),
    ("5.10", "kernel in 5.1,5.4", False),
    ("5.10.0", "os_version>5.9", True),
    # ... while other attributes are numbers first: 2.10 GHz < 2.9 GHz
    ("2.10", "clock_ghz<2.9", True),
    # ordered on a non-number / non-version node value never matches
    ("fast", "nic_gbps>1", False),
    # in
    ("5.15", "kernel in 5.10,5.15", True),
    ("5.4", "kernel in 5.10,5.15", False),
    ("12", "disks in 6, 12", True),
    # a missing attribute satisfies only !=
    (None, "gpu=1", False),
    (None, "gpu!=1", True),
    (None, "gpu in 1,2", False),
    (None, "cores>0", False),
    # multi-valued (YARN node labels): any member for =, in and ordered; none for !=
    (frozenset({"gpu", "ssd"}), "label=gpu", True),
    (frozenset({"gpu", "ssd"}), "label!=gpu", False),
    (frozenset({"ssd"}), "label!=gpu", True),
    (frozenset({"ssd"}), "label in gpu,fpga", False),
    (frozenset(), "label=gpu", False),
])
def test_matching(value, constraint: str, expected: bool) -> None:
    c = parse_constraint(constraint)
    assert c.matches_value(value) is expected
    assert c.matches({} if value is None else {c.attribute: value}) is expected


@pytest.mark.parametrize(("text", "attribute", "op", "values"), [
    ("isa=x86_64", "isa", Op.EQ, ("x86_64",)),
    ("cores >= 8", "cores", Op.GE, ("8",)),
    ("cores<=8", "cores", Op.LE, ("8",)),
    ("kernel!=5.4", "kernel", Op.NE, ("5.4",)),
    ("clock_ghz<3", "clock_ghz", Op.LT, ("3",)),
    ("nic_gbps>10", "nic_gbps", Op.GT, ("10",)),
    ("kernel in 5.4, 5.10", "kernel", Op.IN, ("5.4", "5.10")),
])
def test_parse(text: str, attribute: str, op: Op, values: tuple[str, ...]) -> None:
    c = parse_constraint(text, Strength.SOFT)
    assert (c.attribute, c.op, c.values, c.strength) == (attribute, op, values, Strength.SOFT)


@pytest.mark.parametrize(("text", "message"), [
    ("cores", "expected 'attribute OP value'"),
    ("=8", "expected 'attribute OP value'"),
    ("isa=", "needs a non-empty value"),
    ("cores>many", "needs a number or a dotted version"),
    ("9lives=1", "expected a name"),
])
def test_bad_constraints_are_refused_with_one_line(text: str, message: str) -> None:
    with pytest.raises(ConstraintError, match=message):
        parse_constraint(text)


def test_one_value_unless_in() -> None:
    with pytest.raises(ConstraintError, match="takes one value"):
        Constraint("isa", Op.EQ, ("x86_64", "aarch64"))
    with pytest.raises(ConstraintError, match="expected an attribute name"):
        PlacementConstraint(PlacementKind.AFFINITY, scope="")


def test_key_names_the_resource_not_the_strength() -> None:
    assert parse_constraint("cores>=16").key == parse_constraint("cores>=16", Strength.SOFT).key == "cores>=16"
    assert parse_constraint("kernel in 5.4,5.10").key == "kernel in 5.4,5.10"


def test_node_table_masks_and_codes() -> None:
    table = NodeTable(["a", "b", "c"], [
        {"isa": "x86_64", "cores": "16", "rack": "/r1", "label": frozenset({"gpu"})},
        {"isa": "aarch64", "cores": "64", "rack": "/r1"},
        {"cores": "8", "rack": "/r2"},
    ])
    assert table.mask(parse_constraint("isa=x86_64")).tolist() == [True, False, False]
    assert table.mask(parse_constraint("isa!=x86_64")).tolist() == [False, True, True]
    assert table.mask(parse_constraint("cores>=16")).tolist() == [True, True, False]
    assert table.mask(parse_constraint("label=gpu")).tolist() == [True, False, False]
    assert table.mask(parse_constraint("disks>1")).tolist() == [False, False, False], "an attribute no node has"
    both = table.mask_all([parse_constraint("cores>=16"), parse_constraint("isa!=aarch64")])
    assert both.tolist() == [True, False, False]
    codes, uniques = table.codes("rack")
    assert [uniques[c] for c in codes] == ["/r1", "/r1", "/r2"]
    assert not table.mask(parse_constraint("cores>=16")).flags.writeable, "cached masks are shared: read-only"


_values = st.one_of(st.none(), st.sampled_from(["1", "2", "8", "16", "5.4", "5.10", "x86_64", "arm"]),
                    st.frozensets(st.sampled_from(["gpu", "ssd", "1"]), max_size=2))
_constraints = st.builds(
    lambda op, v: Constraint("a", op, (v,) if op is not Op.IN else (v, "16")),
    st.sampled_from(list(Op)), st.sampled_from(["1", "8", "5.4", "16"]),
)


@given(st.lists(_values, min_size=1, max_size=30), _constraints)
def test_table_mask_equals_per_node_matching(values, c: Constraint) -> None:
    attrs = [{} if v is None else {"a": v} for v in values]
    table = NodeTable([str(i) for i in range(len(values))], attrs)
    assert table.mask(c).tolist() == [c.matches(a) for a in attrs]
    assert np.array_equal(table.mask(c), table.mask(c))
