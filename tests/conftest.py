"""Fixtures shared by every test package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# Shared test doubles (fakes, builders) importable from every test folder.
sys.path.insert(0, str(REPO_ROOT / "tests" / "support"))


def _fixtures_dir() -> Path:
    env = os.environ.get("HARVESTER_FIXTURES_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "fixtures"


def _traces_dir() -> Path:
    env = os.environ.get("HARVESTER_TRACES_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "traces"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The recorded Hadoop 3.3.6 behaviour (../shared/fixtures or $HARVESTER_FIXTURES_DIR)."""
    path = _fixtures_dir()
    if not (path / "README.md").is_file():
        pytest.fail(f"recorded Hadoop fixtures not found at {path}; set HARVESTER_FIXTURES_DIR")
    return path


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The staged public cluster traces (../shared/traces or $HARVESTER_TRACES_DIR)."""
    path = _traces_dir()
    if not (path / "README.md").is_file():
        pytest.fail(f"cluster traces not found at {path}; set HARVESTER_TRACES_DIR")
    return path
