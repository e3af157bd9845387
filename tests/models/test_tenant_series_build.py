"""Tenant series from node samples: primary usage, unit conversion, slot averaging (§3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from harvester.domain import Resources
from harvester.models.tenant_series import build_tenant_series, primary_cpu_cores

from harvesting_builders import sample


def test_primary_usage_from_the_cpu_burn_capture() -> None:
    # scenarios/cpu-burn: 2 cores, 8 vcores; host busy at 2.0 cores, one container reads 3.8 vcores (≈0.95 core)
    s = sample(total=Resources(8192, 8), node_cpu=2.0, containers_vcores=3.8)
    assert primary_cpu_cores(s, 2.0) == pytest.approx(2.0 - 0.95)
    # containers reading more than the host (both NMs on one host) clamp the primary at 0
    assert primary_cpu_cores(sample(total=Resources(8192, 8), node_cpu=0.5, containers_vcores=3.8), 2.0) == 0.0


def test_containers_are_scaled_by_the_current_capacity_vcores() -> None:
    # after a node update to 4 vcores the NM scales container usage by 4 / physical cores
    s = sample(total=Resources(8192, 4), node_cpu=2.0, containers_vcores=2.0)
    assert primary_cpu_cores(s, 2.0) == pytest.approx(1.0)


def test_configured_vcores_scale_when_above_the_updated_total() -> None:
    # NM configured 8 vcores on 2 cores, updated to 4: the reading 2.0 vcores is 0.5 core when the NM
    # scales by its configured 8, 1.0 core when it follows the update; max(8, 4) = 8 takes the
    # smaller container share, so the primary (1.5) is never under-stated (true value 1.5 or 1.0)
    s = sample(total=Resources(8192, 4), node_cpu=2.0, containers_vcores=2.0)
    assert primary_cpu_cores(s, 2.0, configured_vcores=8) == pytest.approx(1.5)
    assert primary_cpu_cores(s, 2.0, configured_vcores=8) >= primary_cpu_cores(s, 2.0)
    # a total above the configured vcores (raised by an operator): the larger one wins again
    raised = sample(total=Resources(8192, 16), node_cpu=2.0, containers_vcores=8.0)
    assert primary_cpu_cores(raised, 2.0, configured_vcores=8) == pytest.approx(1.0)
    # cut to 0 vcores: the configured vcores still separate the containers
    zero = sample(total=Resources(8192, 0), node_cpu=2.0, containers_vcores=4.0)
    assert primary_cpu_cores(zero, 2.0, configured_vcores=8) == pytest.approx(1.0)


def test_zero_vcores_attributes_all_cpu_to_the_primary_and_no_utilization_is_none() -> None:
    assert primary_cpu_cores(sample(total=Resources(8192, 0), node_cpu=1.5, containers_vcores=0.0), 2.0) == 1.5
    assert primary_cpu_cores(sample(node_cpu=None), 16.0) is None


def test_build_averages_nodes_then_tenant_per_slot() -> None:
    samples = [
        sample("a:1", t=10, node_cpu=4.0, containers_vcores=0.0),    # slot 0: a = 4/16
        sample("a:1", t=50, node_cpu=8.0, containers_vcores=0.0),    # slot 0: a = mean(4, 8)/16
        sample("b:1", t=70, node_cpu=2.0, containers_vcores=0.0),    # slot 0: b = 2/16
        sample("b:1", t=130, node_cpu=16.0, containers_vcores=16.0),  # slot 1: b = 0
        sample("c:1", t=20, node_cpu=1.0),                          # no tenant: ignored
        sample("a:1", t=400, node_cpu=1.0),                         # outside the window
    ]
    ts = build_tenant_series(samples, {"a:1": "web", "b:1": "web", "x:1": "db"}, {"a:1": 16.0, "b:1": 16.0, "x:1": 8.0},
                             start=0.0, end=240.0, step_s=120.0)
    assert ts.tenants == ("db", "web")
    np.testing.assert_allclose(ts.matrix[1], [((6 / 16) + (2 / 16)) / 2, 0.0])
    assert np.isnan(ts.matrix[0]).all(), "a tenant whose nodes never reported is all NaN"


def test_empty_window_is_an_error() -> None:
    with pytest.raises(ValueError, match="empty window"):
        build_tenant_series([], {}, {}, start=10.0, end=10.0)
