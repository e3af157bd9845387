"""Pipelines of recurring jobs found in the provenance graph — Morpheus §4 (paper 002) — pure.

§4's graph joins jobs through the files one writes and another reads, "to capture the
dependencies between jobs". Stage B of a pipeline reads stage A's output of the same period, so
B has no deadline of its own making: the pipeline has one, set by whoever reads its LAST output
(harvester.models.slo_inference derives every stage's window from it).

- Edge A → B (jobs with at least `min_periods` runs): B's run read an output of an A run before
  it was old (`superseded_at`: reading an old period's output is a backfill, not a stage), in
  at least `min_periods` of B's runs and at least half of them, and the two run in step: both
  periodic with periods that agree (`same_period`, the caller's test on their own fits), or one
  of them not periodic on its own (a stage started when its upstream ends inherits the
  upstream's jitter) but its runs paired one to one with the other's.
- A pipeline is a connected component of those edges, its stages in topological order (graphlib),
  with at least one periodic stage. A component with a cycle is no pipeline: its jobs stand
  alone. Every other job is a pipeline of one stage, so one code path fits both.
- `links`: the matched run pairs (A's run, B's run) of each edge: they place B's runs in the
  periods of the A runs they read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from typing import Callable, Iterable

from harvester.models.provenance import ProvenanceGraph, RunRecord


@dataclass(frozen=True)
class Pipeline:
    stages: tuple[str, ...]  # topological order (sources first)
    edges: tuple[tuple[str, str], ...]  # (upstream, downstream)
    links: tuple[tuple[str, str], ...] = ()  # (upstream run, downstream run) pairs of those edges

    def downstream(self, job: str) -> tuple[str, ...]:
        return tuple(b for a, b in self.edges if a == job)


def run_links(graph: ProvenanceGraph, runs: Iterable[RunRecord], superseded: dict[str, float | None]
              ) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(upstream job, downstream job) -> {(upstream run, downstream run)}: each run's reads of
    another job's output that was not old yet (module doc)."""
    out: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for r in runs:
        for path, first_read in graph.read_by_run.get(r.run_id, {}).items():
            w = graph.last_writer_before(path, first_read, exclude_run=r.run_id)
            if w is None or w[1] not in graph.runs:
                continue
            up = graph.runs[w[1]]
            until = superseded.get(up.run_id)
            if up.job != r.job and (until is None or first_read < until):
                out.setdefault((up.job, r.job), set()).add((up.run_id, r.run_id))
    return out


def find_pipelines(graph: ProvenanceGraph, by_job: dict[str, list[RunRecord]], eligible: set[str],
                   periodic: set[str], superseded: dict[str, float | None], min_periods: int,
                   same_period: Callable[[str, str], bool]) -> list[Pipeline]:
    """Every eligible job (enough runs) in exactly one pipeline; those of a pipeline without a
    periodic stage are left out (module doc)."""
    links = run_links(graph, (r for j in sorted(eligible) for r in by_job[j]), superseded)
    edges = {}
    for (a, b), pairs in links.items():
        ups, readers = {ra for ra, _ in pairs}, {rb for _, rb in pairs}
        if a not in eligible or b not in eligible or len(readers) < max(min_periods, math.ceil(len(by_job[b]) / 2)):
            continue
        if (a in periodic and b in periodic and same_period(a, b)) or \
                ({a, b} & periodic and len(ups) == len(readers) == len(pairs)):
            edges[(a, b)] = pairs
    adjacent: dict[str, set[str]] = {j: set() for j in eligible}
    for a, b in edges:
        adjacent[a].add(b)
        adjacent[b].add(a)
    seen: set[str] = set()
    out = []
    for job in sorted(eligible):
        if job in seen:
            continue
        component, todo = set(), [job]
        while todo:
            j = todo.pop()
            if j not in component:
                component.add(j)
                todo.extend(adjacent[j] - component)
        seen |= component
        mine = sorted(e for e in edges if e[0] in component)
        sorter: TopologicalSorter[str] = TopologicalSorter()
        for j in sorted(component):
            sorter.add(j, *sorted(a for a, b in mine if b == j))
        try:
            order = tuple(sorter.static_order())
        except CycleError:
            out += [Pipeline((j,), ()) for j in sorted(component) if j in periodic]
            continue
        if component.isdisjoint(periodic):
            continue
        out.append(Pipeline(order, tuple(mine), tuple(sorted(p for e in mine for p in edges[e]))))
    return out
