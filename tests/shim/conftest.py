"""tests/shim: the Java shim's build and tests, and the sidecar's node-ordering face."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from hdfs_placement import PlacementIndex

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "deploy" / "shim"


def load_make_vectors() -> ModuleType:
    """deploy/shim/make_vectors.py (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("shim_make_vectors", SHIM / "make_vectors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def make_vectors() -> ModuleType:
    return load_make_vectors()


@pytest.fixture
def grid9(make_vectors: ModuleType) -> PlacementIndex:
    """Nine tenants, one per cell, 3 nodes each (the vectors' first table)."""
    return make_vectors.grid9()
