"""Task placement constraints over node attributes (Phoenix, paper 003 §III-A) — pure.

Paper 003 §III-A classifies constraints as *hard* ("strict requirements without which a job
cannot run", e.g. number of CPUs), *soft* ("can be relaxed or negotiated by trading off the
job's performance", e.g. CPU clock speed, network bandwidth) and *placement* constraints
("affinity preferences of a group of tasks ... scheduled close to each other" or "spread out
across multiple racks for fault tolerance"). Table II lists the node properties Google tasks
constrain: ISA, number of cores, Ethernet speed, disks (min/max), kernel version, platform
family, CPU clock speed.

A node's attributes are strings (`"x86_64"`, `"16"`, `"5.10"`) or, for multi-valued
attributes such as YARN node labels, a frozenset of strings. Comparison rules:
- version attributes (`kernel` and any name ending in `version`) compare as dotted integer
  tuples: "5.4" < "5.10", "5.10.0-1160" -> (5, 10, 0), and "5.10" != "5.1" — the same text
  read as a number would be 5.1;
- otherwise `=`, `!=`, `in`: numeric equality when both sides are numbers ("10" = "10.0"),
  else exact string equality; `<`, `>`, `<=`, `>=`: numbers as numbers, else dotted versions;
- anything else never satisfies an ordered comparison, and a constraint whose own value is
  neither a number nor a version is refused when it is built;
- multi-valued attributes satisfy a constraint when ANY member does (`!=`: when none equals);
- a node WITHOUT the attribute satisfies only `!=` (it certainly is not that value).

`NodeTable` evaluates a constraint over many nodes at once: each attribute is factorized into
integer codes over its distinct values, the constraint is evaluated once per distinct value,
and the node mask is a gather — clusters have thousands of nodes but few distinct values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from harvester.echo import MAX_ECHO, clip, shown

AttrValue = str | frozenset[str]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")
_VERSION = re.compile(r"^(\d+(?:\.\d+)*)")


class ConstraintError(ValueError):
    """A constraint that can never be evaluated (bad name, operator or value); one line."""


class Op(str, Enum):
    EQ = "="
    NE = "!="
    LT = "<"
    GT = ">"
    LE = "<="
    GE = ">="
    IN = "in"


class Strength(str, Enum):
    """§III-A: HARD must hold; SOFT may be relaxed by admission control (decisions layer)."""

    HARD = "hard"
    SOFT = "soft"


class PlacementKind(str, Enum):
    """§III-A placement constraints: tasks of a group together (AFFINITY) or apart (ANTI_AFFINITY)."""

    AFFINITY = "affinity"
    ANTI_AFFINITY = "anti_affinity"


_ORDERED = {Op.LT, Op.GT, Op.LE, Op.GE}


def _number(s: str) -> float | None:
    try:
        x = float(s)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _version(s: str) -> tuple[int, ...] | None:
    m = _VERSION.match(s)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def is_version_attribute(name: str) -> bool:
    return name == "kernel" or name.endswith("version")


def _equal(a: str, b: str, versioned: bool) -> bool:
    if versioned:
        x, y = _version(a), _version(b)
        if x is not None and y is not None:
            return x == y
        return a == b
    n, m = _number(a), _number(b)
    return n == m if n is not None and m is not None else a == b


def _ordered(node: str, op: Op, want: str, versioned: bool) -> bool:
    x, y = (None, None) if versioned else (_number(node), _number(want))
    left: float | tuple[int, ...] | None
    right: float | tuple[int, ...] | None
    if x is not None and y is not None:
        left, right = x, y
    else:
        left, right = _version(node), _version(want)
        if left is None or right is None:
            return False
    if op is Op.LT:
        return left < right  # type: ignore[operator]
    if op is Op.GT:
        return left > right  # type: ignore[operator]
    if op is Op.LE:
        return left <= right  # type: ignore[operator]
    return left >= right  # type: ignore[operator]


@dataclass(frozen=True, slots=True)
class Constraint:
    """`attribute op values`; `strength` says whether admission control may relax it."""

    attribute: str
    op: Op
    values: tuple[str, ...]
    strength: Strength = Strength.HARD
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.attribute):
            raise ConstraintError(f"attribute {shown(self.attribute)}: expected a name like isa, cores, nic_gbps")
        if not self.values or any(not v for v in self.values):
            raise ConstraintError(f"{self.attribute} {self.op.value}: needs a non-empty value")
        if self.op is not Op.IN and len(self.values) != 1:
            raise ConstraintError(f"{self.attribute} {self.op.value}: takes one value, got {len(self.values)} (use 'in')")
        # the CRV dimension this constraint asks for (strength is not part of the resource)
        key = (f"{self.attribute} in {','.join(self.values)}" if self.op is Op.IN
               else f"{self.attribute}{self.op.value}{self.values[0]}")
        object.__setattr__(self, "key", key)
        if self.op in _ORDERED and _number(self.values[0]) is None and _version(self.values[0]) is None:
            raise ConstraintError(f"{clip(self.key, MAX_ECHO)}: '{self.op.value}' needs a number or a dotted version")

    def matches_value(self, value: AttrValue | None) -> bool:
        if value is None:
            return self.op is Op.NE
        members = value if isinstance(value, frozenset) else (value,)
        versioned = is_version_attribute(self.attribute)
        if self.op is Op.NE:
            return not any(_equal(m, self.values[0], versioned) for m in members)
        if self.op in (Op.EQ, Op.IN):
            return any(_equal(m, v, versioned) for m in members for v in self.values)
        return any(_ordered(m, self.op, self.values[0], versioned) for m in members)

    def matches(self, attributes: Mapping[str, AttrValue]) -> bool:
        return self.matches_value(attributes.get(self.attribute))

    def with_strength(self, strength: Strength) -> Constraint:
        return Constraint(self.attribute, self.op, self.values, strength)


@dataclass(frozen=True, slots=True)
class PlacementConstraint:
    """Tasks of `group` on the same (AFFINITY) or on different (ANTI_AFFINITY) `scope` values.

    `scope` is a node attribute grouping nodes, "rack" by default. An empty `group` means the
    caller's default group (the request's job)."""

    kind: PlacementKind
    scope: str = "rack"
    group: str = ""
    strength: Strength = Strength.HARD

    def __post_init__(self) -> None:
        if not _NAME.match(self.scope):
            raise ConstraintError(f"placement scope {self.scope!r}: expected an attribute name like rack")


_OPS_BY_LENGTH = sorted((o for o in Op if o is not Op.IN), key=lambda o: -len(o.value))


def parse_constraint(text: str, strength: Strength = Strength.HARD) -> Constraint:
    """`"cores>=8"`, `"isa=x86_64"`, `"kernel in 5.4,5.10"` -> Constraint (ConstraintError if bad)."""
    s = text.strip()
    m = re.match(r"^(\S+)\s+in\s+(.+)$", s)
    if m:
        return Constraint(m.group(1), Op.IN, tuple(v.strip() for v in m.group(2).split(",")), strength)
    for op in _OPS_BY_LENGTH:
        name, sep, value = s.partition(op.value)
        if sep and name.strip() and not name.strip().endswith(("<", ">", "!")):
            return Constraint(name.strip(), op, (value.strip(),), strength)
    raise ConstraintError(f"constraint {text!r}: expected 'attribute OP value' with OP one of = != < > <= >= in")


class NodeTable:
    """Attributes of `node_ids` in factorized columns; `mask(c)` = nodes satisfying `c`."""

    def __init__(self, node_ids: Sequence[str], attributes: Sequence[Mapping[str, AttrValue]]) -> None:
        if len(node_ids) != len(attributes):
            raise ValueError("one attribute mapping per node")
        self.node_ids = tuple(node_ids)
        self.size = len(self.node_ids)
        self._columns: dict[str, tuple[np.ndarray, list[AttrValue]]] = {}
        names = sorted({k for a in attributes for k in a})
        for name in names:
            index: dict[AttrValue, int] = {}
            codes = np.fromiter((-1 if (v := a.get(name)) is None else index.setdefault(v, len(index)) for a in attributes),
                                dtype=np.int32, count=self.size)
            self._columns[name] = (codes, list(index))
        self._cache: dict[tuple[str, Op, tuple[str, ...]], np.ndarray] = {}

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self._columns)

    def codes(self, attribute: str) -> tuple[np.ndarray, list[AttrValue]]:
        """Per-node code (-1 = missing) and the distinct values the codes index."""
        if attribute not in self._columns:
            return np.full(self.size, -1, dtype=np.int32), []
        return self._columns[attribute]

    def mask(self, c: Constraint) -> np.ndarray:
        """Boolean array over nodes (read-only, cached per attribute/op/values)."""
        key = (c.attribute, c.op, c.values)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        codes, uniques = self.codes(c.attribute)
        per_value = np.fromiter((c.matches_value(u) for u in uniques), dtype=bool, count=len(uniques))
        lookup = np.append(per_value, c.matches_value(None))  # code -1 indexes the last slot
        out = lookup[codes]
        out.flags.writeable = False
        self._cache[key] = out
        return out

    def mask_all(self, constraints: Iterable[Constraint]) -> np.ndarray:
        out = np.ones(self.size, dtype=bool)
        for c in constraints:
            out &= self.mask(c)
        return out
