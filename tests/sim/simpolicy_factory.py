"""A policy factory importable as `module:callable` (used by test_policies)."""

from __future__ import annotations

from typing import Any, Mapping

from harvester.sim.policies import SimContext, StockYarnPolicy


class _Named(StockYarnPolicy):
    name = "from-a-module"


def make(params: Mapping[str, Any], context: SimContext) -> StockYarnPolicy:
    return _Named(context, **dict(params))
