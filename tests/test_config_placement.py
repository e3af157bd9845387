"""The `placement:` settings section and how it resolves node attributes (Phoenix)."""

from __future__ import annotations

import pytest

from harvester.config import ConfigError, parse_settings
from harvester.decisions.placement_view import cluster_view, node_attributes
from harvester.domain import ClusterSnapshot, NodeSample, Resources


def _node(host: str, labels: tuple[str, ...] = (), rack: str = "/r1") -> NodeSample:
    return NodeSample(f"{host}:8041", 0.0, "RUNNING", rack, host, Resources(16384, 16), Resources(4096, 4), 2,
                      None, None, None, None, None, labels)


def test_yaml_numbers_become_strings_and_later_rules_win_key_by_key() -> None:
    s = parse_settings({"placement": {
        "node_attributes": [{"hostname_pattern": ".", "attributes": {"isa": "x86_64", "cores": 16}},
                            {"nodes": ["big-1"], "attributes": {"cores": 64.0}}],
        "label_attributes": {"gpu": {"gpu": 1, "cores": 32}},
    }}, environ={}).placement
    assert node_attributes(_node("big-1"), s) == {
        "node_id": "big-1:8041", "hostname": "big-1", "rack": "/r1", "vcores": "16", "memory_mb": "16384",
        "isa": "x86_64", "cores": "64.0"}
    gpu = node_attributes(_node("gpu-1", labels=("gpu", "ssd")), s)
    assert gpu["label"] == frozenset({"gpu", "ssd"}) and gpu["gpu"] == "1"
    assert gpu["cores"] == "16", "labels apply first, node_attributes rules override them"


def test_view_free_resources_and_usable_nodes() -> None:
    s = parse_settings({}, environ={}).placement
    lost = NodeSample("x:1", 0.0, "LOST", "/r", "x", Resources(1024, 1), Resources(0, 0), 0, None, None, None, None)
    v = cluster_view(ClusterSnapshot(5.0, "rm", (_node("a"), lost)), s)
    assert v.time == 5.0 and v.free_mb.tolist() == [12288, 1024] and v.free_vcores.tolist() == [12, 1]
    assert v.usable.tolist() == [True, False] and v.busy_fraction.tolist() == [0.25, 0.0]


@pytest.mark.parametrize(("placement", "message"), [
    ({"node_attributes": [{"attributes": {"isa": "x"}}]}, "placement.node_attributes[0]: give nodes or hostname_pattern"),
    ({"node_attributes": [{"nodes": ["a"], "attributes": {"9isa": "x"}}]}, "attribute name '9isa'"),
    ({"node_attributes": [{"nodes": ["a"], "attributes": {"rack": "/r9"}}]}, "attribute 'rack' comes from the RM"),
    ({"node_attributes": [{"nodes": ["a"], "attributes": {"isa": " "}}]}, "attribute 'isa': empty value"),
    ({"node_attributes": [{"hostname_pattern": "(", "attributes": {"isa": "x"}}]}, "invalid regular expression"),
    ({"label_attributes": {"gpu": {"label": "x"}}}, "attribute 'label' comes from the RM"),
    ({"candidates_per_task": 0}, "placement.candidates_per_task"),
    ({"max_wait_s": 0}, "placement.max_wait_s"),
    ({"colour": "red"}, "placement.colour: unknown key"),
])
def test_bad_placement_settings_are_one_line_naming_the_key(placement: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings({"placement": placement}, environ={})
    assert message in str(info.value) and "\n" not in str(info.value)
