"""The reimage heuristic over NameNode JMX history (models/reimage_detection.py), on beans
shaped like the recorded 3.3.6 NameNodeInfo."""

from __future__ import annotations

import pytest

from harvester.models.reimage_detection import (
    SOURCE_JMX,
    SOURCE_LOG,
    DetectionParams,
    ReimageEvent,
    detect_reimages,
    merge_reimages,
    per_datanode,
)
from harvester.telemetry.namenode_model import parse_namenode_info
from nn_fakes import DN, info_doc

P = DetectionParams(min_blocks=100, reset_fraction=0.05, cluster_drop_fraction=0.5)


def polls(*steps: tuple[float, list[DN], dict]):
    """Run detection over successive polls; returns every event and the final observations."""
    state: dict = {}
    events = []
    for t, nodes, kw in steps:
        det = detect_reimages(state, parse_namenode_info(info_doc(nodes, **kw), "nn"), t, P)
        events += det.events
        state = det.observations
    return events, state


def cluster(a_blocks: int, b_blocks: int = 5000) -> list[DN]:
    return [DN("dn-a", "10.0.0.1", blocks=a_blocks), DN("dn-b", "10.0.0.2", blocks=b_blocks)]


def test_a_datanode_that_drops_out_and_returns_empty_is_a_reimage() -> None:
    events, state = polls(
        (0.0, cluster(2000), {}),
        (30.0, [DN("dn-b", "10.0.0.2", blocks=5000)], {}),        # dn-a gone (dead or being wiped)
        (900.0, cluster(0, 7000), {}),                           # back with no blocks; others grew
    )
    (e,) = events
    assert (e.hostname, e.datanode_id, e.time, e.source) == ("dn-a", "10.0.0.1:9866", 900.0, SOURCE_JMX)
    assert "2000 -> 0" in e.reason and "last seen 900 s before" in e.reason
    assert state["dn-a:9866"].num_blocks == 0 and state["dn-a:9866"].first_seen == 0.0


def test_a_fast_wipe_without_a_gap_counts_too() -> None:
    events, _ = polls((0.0, cluster(2000), {}), (30.0, cluster(3), {}))
    assert [e.hostname for e in events] == ["dn-a"]


@pytest.mark.parametrize(
    ("steps", "why"),
    [
        (((0.0, cluster(2000), {}), (30.0, cluster(1500), {})), "a partial loss (balancer, deletes) is not a wipe"),
        (((0.0, cluster(50), {}), (30.0, cluster(0), {})), "too few blocks before to tell"),
        (((0.0, cluster(2000), {"started_ms": 1}), (30.0, cluster(0), {"started_ms": 2})),
         "a NameNode restart rebuilds block counts from reports: baseline reset"),
        (((0.0, cluster(2000, 2000), {}), (30.0, cluster(0, 100), {})), "the cluster lost most blocks: a mass delete"),
        (((0.0, cluster(2000), {}), (30.0, [DN("dn-b", "10.0.0.2", blocks=5000)], {})), "gone is not (yet) reimaged"),
    ],
)
def test_not_a_reimage(steps, why: str) -> None:
    events, _ = polls(*steps)
    assert events == [], why


def test_after_a_namenode_restart_the_next_wipe_is_seen_again() -> None:
    events, _ = polls((0.0, cluster(2000), {"started_ms": 1}), (30.0, cluster(0), {"started_ms": 2}),
                      (60.0, cluster(2000), {"started_ms": 2}), (90.0, cluster(1), {"started_ms": 2}))
    assert [e.time for e in events] == [90.0]


def test_merge_keeps_one_event_per_reimage_across_sources() -> None:
    log = ReimageEvent(100.0, "dn-a", "web", source=SOURCE_LOG)
    seen = ReimageEvent(1000.0, "dn-a", "web", "10.0.0.1:9866", SOURCE_JMX)
    later = ReimageEvent(100.0 + 3 * 86400, "dn-a", "web", "10.0.0.1:9866", SOURCE_JMX)
    other_host = ReimageEvent(1000.0, "dn-b", "web", "10.0.0.2:9866", SOURCE_JMX)
    twice_in_log = ReimageEvent(200.0, "dn-a", "web", source=SOURCE_LOG)
    got = merge_reimages([seen, later, log, other_host, twice_in_log], dedupe_s=86400)
    assert got == [log, twice_in_log, other_host, later]


def test_two_datanodes_of_one_host_are_watched_apart() -> None:
    box = [DN("box", "10.0.0.5", port=9866, blocks=2000), DN("box", "10.0.0.5", port=9867, blocks=1000),
           DN("dn-b", "10.0.0.2", blocks=5000)]
    wiped = [box[0], DN("box", "10.0.0.5", port=9867, blocks=0), box[2]]
    events, state = polls((0.0, box, {}), (30.0, wiped, {}))
    assert [(e.hostname, e.datanode_id) for e in events] == [("box", "10.0.0.5:9867")]
    assert {o.datanode_id: o.num_blocks for o in state.values()} == \
        {"10.0.0.5:9866": 2000, "10.0.0.5:9867": 0, "10.0.0.2:9866": 5000}


def test_a_host_wide_log_line_becomes_one_event_per_datanode_on_the_host() -> None:
    live = parse_namenode_info(info_doc([DN("box", "10.0.0.5", port=9866), DN("box", "10.0.0.5", port=9867),
                                         DN("web-0", "10.0.1.1")]), "nn").live
    tenant_of = {"10.0.0.5:9866": "web", "10.0.0.5:9867": "db", "10.0.1.1:9866": "web"}
    by_name, by_ip = ReimageEvent(10.0, "box"), ReimageEvent(20.0, "10.0.1.1")
    only_db, gone = ReimageEvent(30.0, "box", tenant="db"), ReimageEvent(40.0, "old-host")
    seen = ReimageEvent(50.0, "box", "web", "10.0.0.5:9866", SOURCE_JMX)
    got = per_datanode([by_name, by_ip, only_db, gone, seen], live, tenant_of)
    assert [(e.time, e.hostname, e.datanode_id, e.tenant) for e in got] == [
        (10.0, "box", "10.0.0.5:9866", ""), (10.0, "box", "10.0.0.5:9867", ""),
        (20.0, "web-0", "10.0.1.1:9866", ""),
        (30.0, "box", "10.0.0.5:9867", "db"),
        (40.0, "old-host", "", ""),
        (50.0, "box", "10.0.0.5:9866", "web"),
    ]


def test_merge_dedupes_per_datanode_when_both_sources_name_one() -> None:
    log_a = ReimageEvent(100.0, "box", datanode_id="10.0.0.5:9866", source=SOURCE_LOG)
    log_b = ReimageEvent(100.0, "box", datanode_id="10.0.0.5:9867", source=SOURCE_LOG)
    jmx_a = ReimageEvent(400.0, "box", "web", "10.0.0.5:9866", SOURCE_JMX)
    jmx_c = ReimageEvent(400.0, "box", "etl", "10.0.0.5:9868", SOURCE_JMX)
    assert merge_reimages([jmx_a, jmx_c, log_a, log_b]) == [log_a, log_b, jmx_c], \
        "the log's wipe of :9866 is the one the heuristic saw; :9868 is another DataNode of the host"
