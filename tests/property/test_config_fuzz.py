"""Fuzz the settings loader (issue 15 item 7): any YAML text, and any document built from the
schema's own keys with hostile values, is either valid settings or ONE `ConfigError` line —
never another exception, never a traceback — and what validates has finite numbers only."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from harvester.config import ConfigError, Settings, load_settings, parse_settings, schema_paths
from harvester.preflight import PreflightError, preflight

PATHS = schema_paths()
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["1e308", ".inf", "-.inf", ".nan", "0x10", "1_000"]),
    st.text(max_size=12), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _nest(pairs: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for path, value in pairs.items():
        node = doc
        *heads, last = path.split(".")
        for h in heads:
            node = node.setdefault(h, {}) if isinstance(node.get(h, {}), dict) else {}
        node[last] = value
    return doc


def _finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_finite(v) for v in obj)
    return True


@settings(max_examples=300, deadline=None)
@given(pairs=st.dictionaries(st.sampled_from(PATHS), VALUES, max_size=6))
def test_hostile_values_under_real_keys_are_one_line_or_valid(pairs: dict[str, Any]) -> None:
    try:
        s = parse_settings(_nest(pairs), environ={})
    except ConfigError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert isinstance(s, Settings) and _finite(s.model_dump())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(
    st.text(max_size=200),
    st.recursive(st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=5)),
                 lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                 max_leaves=20).map(lambda d: yaml.safe_dump(d)),
))
def test_any_text_is_a_settings_file_or_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        s = load_settings(path, environ={})
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    try:
        preflight(s, environ={})
    except PreflightError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=50, deadline=None)
@given(env=st.dictionaries(st.sampled_from([f"HARVESTER_{p.upper().replace('.', '__')}" for p in PATHS]),
                           st.text(max_size=12), max_size=3))
def test_environment_overrides_are_one_line_or_valid(env: dict[str, str]) -> None:
    try:
        parse_settings({}, environ=env)
    except ConfigError as exc:
        assert "\n" not in str(exc)
