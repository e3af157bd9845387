"""The `placement:` settings section (Phoenix constraint-aware placement), part of config.py.

Kept in its own module like `config_hdfs.py`; `harvester.config` puts it on
`Settings.placement`. Every key is documented in deploy/harvester.yaml. Node attributes
(ISA, cores, clock, NIC speed, kernel, disks, GPU, ...) come from these rules and from the
RM's node labels: Hadoop 3.3.6 exposes labels over REST but has no node-attributes endpoint
(../shared/fixtures/README.md), so everything else must be configured here.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from harvester.config_base import MAX_PERIOD_S, Section
from harvester.config_harvesting import _check_regex

_ATTRIBUTE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")
#: Attributes Harvester fills in itself from the RM's node report (docs/phoenix.md).
BUILT_IN_ATTRIBUTES = ("node_id", "hostname", "rack", "vcores", "memory_mb", "label")


def _check_attributes(v: dict[str, str]) -> dict[str, str]:
    for name, value in v.items():
        if not _ATTRIBUTE.match(name):
            raise ValueError(f"attribute name {name!r}: expected letters, digits, _ . - / (e.g. isa, nic_gbps)")
        if name in BUILT_IN_ATTRIBUTES:
            raise ValueError(f"attribute {name!r} comes from the RM and cannot be configured")
        if not str(value).strip():
            raise ValueError(f"attribute {name!r}: empty value")
    return {k: str(x).strip() for k, x in v.items()}


def _attributes_before(v: object) -> object:
    """YAML numbers (`cores: 16`) become strings; names and values are checked."""
    return _check_attributes(v) if isinstance(v, dict) else v


class NodeAttributeRule(Section):
    """Attributes of the nodes it matches; later matching rules override earlier ones, key by key."""

    nodes: list[str] = Field(default_factory=list, description="Node ids (host:port) or hostnames.")
    hostname_pattern: str | None = Field(None, description="Python regex searched in the hostname.")
    attributes: dict[str, str] = Field(description="Attribute name -> value (numbers and versions are compared as such).")

    _re = field_validator("hostname_pattern")(_check_regex)
    _attrs = field_validator("attributes", mode="before")(_attributes_before)

    @model_validator(mode="after")
    def _needs_a_selector(self) -> NodeAttributeRule:
        if not self.nodes and self.hostname_pattern is None:
            raise ValueError("give nodes or hostname_pattern")
        return self

    def matches(self, node_id: str, hostname: str) -> bool:
        if node_id in self.nodes or hostname in self.nodes:
            return True
        return self.hostname_pattern is not None and re.search(self.hostname_pattern, hostname) is not None


class PlacementSettings(Section):
    enabled: bool = Field(True, description="Serve harvester.v1.ConstrainedPlacement over the latest telemetry snapshot.")
    node_attributes: list[NodeAttributeRule] = Field(
        default_factory=list, description="Node attributes by node id / hostname regex (later rules win, key by key)."
    )
    label_attributes: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="YARN node label -> attributes its nodes get (applied before node_attributes)."
    )
    candidates_per_task: int = Field(3, ge=1, le=64, description="Nodes returned per task when a request leaves it 0.")
    max_wait_s: float = Field(
        30.0, gt=0, le=86400, description="Admission control: relax a task's soft constraints when its M/G/1 wait exceeds this ..."
    )
    max_wait_factor: float = Field(
        2.0, ge=0, le=1000, description="... and exceeds this many times the task's expected duration."
    )
    default_task_duration_s: float = Field(60.0, gt=0, le=MAX_PERIOD_S, description="Service time assumed for a task that gives none.")
    demand_window_s: float = Field(300.0, gt=0, le=86400, description="Arrivals of this many recent seconds make the CRV demand and M/G/1 rates.")
    max_tasks_per_request: int = Field(20000, ge=1, le=1_000_000, description="Larger PlaceTasks batches are refused (INVALID_ARGUMENT).")

    @field_validator("label_attributes", mode="before")
    @classmethod
    def _labels(cls, v: object) -> object:
        if isinstance(v, dict):
            return {str(label): _attributes_before(attrs) for label, attrs in v.items()}
        return v
