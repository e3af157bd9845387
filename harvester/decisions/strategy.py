"""Resolved harvesting strategy (DESIGN.md principle 10) and the resolver from settings.

Decision code never sees rules or overrides: `resolve_nodes` turns the `harvesting:` section
(tenant rules, node size defaults and overrides) plus what telemetry knows about each node into
one concrete `NodeStrategy` per node, and `guard_strategy` / `selection_strategy` /
`class_params` / `reserve_policy` turn the rest into frozen values.

Resolution rules:
- Tenant: the first `tenants` rule whose `nodes` list holds the node id or hostname, or whose
  `hostname_pattern` is found in the hostname (re.search). No match: `unmatched_nodes`
  own_tenant → the node is its own tenant, named by its hostname; ignore → not harvested.
- Sizes: `node_resources` defaults, then every matching override in order (later wins, field by
  field). Physical cores fall back to what telemetry reports; NM vcores / memory fall back to
  the node's total first seen by Harvester (`NodeIdentity.baseline`: the loop records it
  before its first capacity update, because afterwards the RM's total is our own number).
  A node whose physical cores or NM capacity stay unknown is not harvested (listed, with why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Mapping, Sequence

from harvester.config_harvesting import HarvestingSettings
from harvester.decisions.class_selection import DEFAULT_WEIGHTS, Weights
from harvester.decisions.reserve import ReservePolicy
from harvester.domain import Resources
from harvester.models.job_history import JobType, LengthThresholds
from harvester.models.patterns import Pattern, PatternParams
from harvester.models.utilization_classes import ClassParams


class KillMechanism(str, Enum):
    """Who kills batch containers when the primary spikes (decisions/guard.py says why)."""

    RM_OVERCOMMIT = "rm_overcommit"
    SIGNALS = "signals"
    SIGNALS_WITH_BACKSTOP = "signals_with_backstop"


@dataclass(frozen=True, slots=True)
class NodeIdentity:
    """What telemetry knows about a node, input of the resolver."""

    node_id: str
    hostname: str
    baseline: Resources | None = None
    physical_cores: float | None = None


@dataclass(frozen=True, slots=True)
class NodeStrategy:
    """One node, fully resolved: its tenant and sizes."""

    node_id: str
    hostname: str
    tenant: str
    environment: str
    physical_cores: float
    capacity: Resources            # the NodeManager's configured resources
    host_memory_mb: int | None = None

    @property
    def vcores_per_core(self) -> float:
        return self.capacity.vcores / self.physical_cores


@dataclass(frozen=True, slots=True)
class GuardStrategy:
    stale_after_s: float = 30.0
    min_increase_vcores: int = 2
    min_increase_memory_mb: int = 1024
    min_decrease_vcores: int = 1
    min_decrease_memory_mb: int = 512
    min_interval_s: float = 60.0
    kill_mechanism: KillMechanism = KillMechanism.RM_OVERCOMMIT
    overcommit_timeout_ms: int = 0
    backstop_timeout_ms: int = 30000
    escalation_delay_s: float = 10.0
    kill_ams: bool = False
    freeze_on_stale: bool = True
    memory_reserve_fraction: float = 0.10
    kill_when: str = "reserve_exhausted"     # or "reserve_used" (decisions/guard_kills.py)
    am_floor: bool = True


@dataclass(frozen=True, slots=True)
class SelectionStrategy:
    weights: Weights
    fallback_thresholds: LengthThresholds
    length_mode: str = "quantiles"
    short_quantile: float = 1 / 3
    long_quantile: float = 2 / 3
    min_runs: int = 10


#: Algorithm 1's weights and cold-start thresholds when the composition root gives none.
DEFAULT_SELECTION = SelectionStrategy(DEFAULT_WEIGHTS, LengthThresholds(300.0, 3600.0, "configured defaults (cold start)"))


class _Matcher:
    """Rules with `nodes` lists and/or a `hostname_pattern`, compiled once for many lookups: a
    rule matches a node whose id or hostname is listed, or whose hostname the pattern finds."""

    def __init__(self, rules: Sequence[tuple[Sequence[str], str | None]]) -> None:
        self._listed: dict[str, list[int]] = {}
        for i, (names, _) in enumerate(rules):
            for name in names:
                self._listed.setdefault(name, []).append(i)
        self._patterns = [(i, re.compile(p)) for i, (_, p) in enumerate(rules) if p is not None]

    def matches(self, node: NodeIdentity) -> list[int]:
        """Indexes of every rule that matches, in rule order."""
        hits = set(self._listed.get(node.node_id, ())) | set(self._listed.get(node.hostname, ()))
        hits.update(i for i, rx in self._patterns if rx.search(node.hostname) is not None)
        return sorted(hits)

    def first(self, node: NodeIdentity) -> int | None:
        listed = self._listed.get(node.node_id, []) + self._listed.get(node.hostname, [])
        best = min(listed) if listed else None
        for i, rx in self._patterns:
            if best is not None and i >= best:
                break
            if rx.search(node.hostname) is not None:
                return i
        return best


class _Rules:
    """The tenant rules and the size overrides of one `harvesting:` section, compiled."""

    def __init__(self, h: HarvestingSettings) -> None:
        self.h = h
        self.tenants = _Matcher([(r.nodes, r.hostname_pattern) for r in h.tenants])
        self.overrides = _Matcher([(o.nodes, o.hostname_pattern) for o in h.node_resources.overrides])


def _sizes(rules: _Rules, node: NodeIdentity) -> dict[str, float | int | None]:
    nr = rules.h.node_resources
    sizes: dict[str, float | int | None] = {
        "physical_cores": nr.physical_cores, "vcores": nr.vcores, "memory_mb": nr.memory_mb,
        "host_memory_mb": nr.host_memory_mb,
    }
    for i in rules.overrides.matches(node):
        o = nr.overrides[i]
        for key in sizes:
            value = getattr(o, key)
            if value is not None:
                sizes[key] = value
    return sizes


def configured_physical_cores(h: HarvestingSettings, node_id: str, hostname: str) -> float | None:
    """Physical cores of a host from `node_resources` (defaults, then overrides); None if unset."""
    cores = _sizes(_Rules(h), NodeIdentity(node_id, hostname))["physical_cores"]
    return None if cores is None else float(cores)


def _tenant(rules: _Rules, node: NodeIdentity) -> tuple[str, str] | None:
    i = rules.tenants.first(node)
    if i is not None:
        rule = rules.h.tenants[i]
        return rule.tenant, rule.environment
    if rules.h.unmatched_nodes == "ignore":
        return None
    return node.hostname or node.node_id, ""


def resolve_tenant(h: HarvestingSettings, node: NodeIdentity) -> tuple[str, str] | None:
    """(tenant, environment) of a node by the tenant rules; None when `unmatched_nodes: ignore`
    and no rule matches. Shared by YARN nodes and HDFS DataNodes (same hosts, same tenants)."""
    return _tenant(_Rules(h), node)


def _resolve(rules: _Rules, node: NodeIdentity) -> NodeStrategy | str:
    """The node's strategy, or why it is left out."""
    owner = _tenant(rules, node)
    if owner is None:
        return "no tenant rule matches (unmatched_nodes: ignore)"
    tenant, env = owner
    s = _sizes(rules, node)
    cores = s["physical_cores"] if s["physical_cores"] is not None else node.physical_cores
    base = node.baseline
    vcores = s["vcores"] if s["vcores"] is not None else (base.vcores if base else None)
    memory = s["memory_mb"] if s["memory_mb"] is not None else (base.memory_mb if base else None)
    if not cores or cores <= 0:
        return "physical cores unknown (harvesting.node_resources.physical_cores)"
    if not vcores or memory is None or vcores <= 0:
        return "NodeManager capacity unknown (node_resources.vcores / memory_mb, or a first observation)"
    host_mem = s["host_memory_mb"]
    return NodeStrategy(node.node_id, node.hostname, tenant, env, float(cores), Resources(int(memory), int(vcores)),
                        None if host_mem is None else int(host_mem))


class NodeResolver:
    """`resolve_nodes` for one `harvesting:` section, the rules compiled once (a loop resolves
    every node every few seconds)."""

    def __init__(self, h: HarvestingSettings) -> None:
        self._rules = _Rules(h)

    def one(self, node: NodeIdentity) -> NodeStrategy | str:
        """The node's strategy, or why it is left out."""
        return _resolve(self._rules, node)

    def resolve(self, nodes: Iterable[NodeIdentity]) -> tuple[dict[str, NodeStrategy], dict[str, str]]:
        """(strategy per harvested node, reason per node left out)."""
        resolved: dict[str, NodeStrategy] = {}
        left_out: dict[str, str] = {}
        for node in nodes:
            got = _resolve(self._rules, node)
            if isinstance(got, str):
                left_out[node.node_id] = got
            else:
                resolved[node.node_id] = got
        return resolved, left_out


def resolve_nodes(
    h: HarvestingSettings, nodes: Iterable[NodeIdentity]
) -> tuple[dict[str, NodeStrategy], dict[str, str]]:
    """(strategy per harvested node, reason per node left out)."""
    return NodeResolver(h).resolve(nodes)


def guard_strategy(h: HarvestingSettings, *, telemetry_stale_after_s: float) -> GuardStrategy:
    g = h.guard
    return GuardStrategy(
        stale_after_s=g.stale_after_s if g.stale_after_s is not None else telemetry_stale_after_s,
        min_increase_vcores=g.min_increase_vcores, min_increase_memory_mb=g.min_increase_memory_mb,
        min_decrease_vcores=g.min_decrease_vcores, min_decrease_memory_mb=g.min_decrease_memory_mb,
        min_interval_s=g.min_interval_s, kill_mechanism=KillMechanism(g.kill_mechanism),
        overcommit_timeout_ms=g.overcommit_timeout_ms, backstop_timeout_ms=g.backstop_timeout_ms,
        escalation_delay_s=g.escalation_delay_s, kill_ams=g.kill_ams, freeze_on_stale=g.freeze_on_stale,
        memory_reserve_fraction=h.reserve.memory_fraction, kill_when=g.kill_when, am_floor=g.am_floor,
    )


def selection_strategy(h: HarvestingSettings) -> SelectionStrategy:
    w = h.weights
    rows = {JobType.LONG: w.long, JobType.MEDIUM: w.medium, JobType.SHORT: w.short}
    weights: Mapping[JobType, Mapping[Pattern, float]] = {
        t: {Pattern.CONSTANT: r.constant, Pattern.PERIODIC: r.periodic, Pattern.UNPREDICTABLE: r.unpredictable}
        for t, r in rows.items()
    }
    jl = h.job_length
    return SelectionStrategy(
        weights, LengthThresholds(jl.default_short_s, jl.default_long_s, "configured defaults (cold start)"),
        jl.mode, jl.short_quantile, jl.long_quantile, jl.min_runs,
    )


def class_params(h: HarvestingSettings) -> ClassParams:
    p, c = h.patterns, h.clustering
    return ClassParams(
        PatternParams(
            step_s=h.sample_step_s, periodic_min_share=p.periodic_min_share, harmonics=p.harmonics,
            bin_tolerance=p.bin_tolerance, weekly=p.weekly, constant_max_std=p.constant_max_std,
            constant_max_cv=p.constant_max_cv, min_samples=p.min_samples, min_days_periodic=p.min_days_periodic,
            max_missing_fraction=p.max_missing_fraction, peak_quantile=p.peak_quantile,
        ),
        max_k=c.max_k, seed=c.seed, n_init=c.n_init, silhouette_sample=c.silhouette_sample,
    )


def reserve_policy(h: HarvestingSettings) -> ReservePolicy:
    r = h.reserve
    return ReservePolicy(floor=r.floor, cap=r.cap, cold_start=r.cold_start, min_changes=r.min_changes)

