"""PlacementTable: building, the flat JSON contract for the Java plug-in, the JMX source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdfs_placement import (
    SCHEMA,
    DataNode,
    PlacementIndex,
    PlacementTable,
    TenantStats,
    build_placement_table,
    fit_grid,
)


def test_build_places_nodes_in_their_tenant_cell_and_sums_cells(grid9: PlacementIndex) -> None:
    table = grid9.table
    assert table.version == 7 and table.generated_at_ms == 1_795_431_979_089
    assert [e.datanode_id for e in table.datanodes] == sorted(e.datanode_id for e in table.datanodes)
    for e in table.datanodes:
        assert e.tenant == f"t{e.row}{e.col}"
    assert [c.available_bytes for c in table.cells] == [3 * 10**12] * 9
    assert [c.tenants for c in table.cells] == [1] * 9


def test_tenant_without_stats_is_unclassified() -> None:
    grid = fit_grid([TenantStats("known", "e", 0.1, 0.1, 10)])
    nodes = [DataNode("10.0.0.1:9866", "a", "/r1", "known", "e", 10, 10),
             DataNode("10.0.0.2:9866", "b", "/r1", "stranger", "e2", 10, 7, busy=True)]
    table = build_placement_table(nodes, grid, version=1, generated_at_ms=5, busy_cpu_threshold=0.8)
    stranger = table.datanodes[1]
    assert (stranger.row, stranger.col, stranger.busy) == (-1, -1, True)
    assert sum(c.available_bytes for c in table.cells) == 10  # unclassified bytes are in no cell


def test_json_round_trip_is_flat_ascii_and_stable(grid9: PlacementIndex) -> None:
    table = grid9.table
    doc = table.to_json()
    assert doc["schema"] == SCHEMA
    assert list(doc) == ["schema", "version", "grid_version", "generated_at_ms", "busy_cpu_threshold", "cells", "datanodes"]
    for key in ("cells", "datanodes"):
        for obj in doc[key]:
            assert all(isinstance(v, (str, int, float, bool)) for v in obj.values())
    text = table.dumps()
    assert text.isascii() and ": " not in text  # compact separators
    assert PlacementTable.from_json(json.loads(text)) == table
    assert table.dumps() == PlacementTable.from_json(json.loads(text)).dumps()


def test_json_escapes_odd_strings() -> None:
    grid = fit_grid([TenantStats('q"uote\\ü', "é", 0.1, 0.1, 10)])
    table = build_placement_table([DataNode("[::1]:9866", "hö", "/r", 'q"uote\\ü', "é", 1, 1)], grid,
                                  version=3, generated_at_ms=0, busy_cpu_threshold=0.5)
    text = table.dumps()
    assert text.isascii() and "\\u00fc" in text
    assert PlacementTable.from_json(json.loads(text)) == table


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(schema="other"), "schema"),
        (lambda d: d.update(version="7"), "version"),
        (lambda d: d.update(busy_cpu_threshold=True), "busy_cpu_threshold"),
        (lambda d: d["datanodes"][0].update(busy="false"), "datanodes[0].busy"),
        (lambda d: d["datanodes"][1].update(row=True), "datanodes[1].row"),
        (lambda d: d["datanodes"][2].pop("rack"), "datanodes[2].rack"),
        (lambda d: d["cells"][3].update(tenants=1.5), "cells[3].tenants"),
        (lambda d: d.update(cells={}), "cells"),
    ],
)
def test_from_json_names_the_bad_field(grid9: PlacementIndex, mutate, field: str) -> None:
    doc = grid9.table.to_json()
    mutate(doc)
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        PlacementTable.from_json(doc)


def test_table_invariants_are_checked(grid9: PlacementIndex) -> None:
    doc = grid9.table.to_json()
    doc["datanodes"][1]["datanode_id"] = doc["datanodes"][0]["datanode_id"]
    with pytest.raises(ValueError, match="duplicate"):
        PlacementTable.from_json(doc)
    doc = grid9.table.to_json()
    doc["datanodes"][0]["row"] = 3
    with pytest.raises(ValueError, match="outside the grid"):
        PlacementTable.from_json(doc)


def test_datanodes_from_real_namenode_jmx(fixtures_dir: Path) -> None:
    """LiveNodes of a real 3.3.6 NameNode (a JSON string inside JSON) feed the table."""
    bean = json.loads((fixtures_dir / "hdfs-3.3.6" / "nn-jmx-NameNodeInfo.json").read_text())["beans"][0]
    live = json.loads(bean["LiveNodes"])
    nodes = [
        DataNode(v["xferaddr"], name.split(":")[0], v["location"], "tenant-a", "env-a", v["capacity"], v["remaining"])
        for name, v in live.items()
    ]
    grid = fit_grid([TenantStats("tenant-a", "env-a", 0.2, 0.4, sum(n.remaining_bytes for n in nodes))])
    table = build_placement_table(nodes, grid, version=1, generated_at_ms=0, busy_cpu_threshold=0.9)
    (entry,) = table.datanodes
    assert (entry.datanode_id, entry.rack) == ("127.0.0.1:9866", "/default-rack")
    assert (entry.capacity_bytes, entry.remaining_bytes) == (270553174016, 84638343168)
    index = PlacementIndex(table)
    # The writer may be named by id, hostname or IP, as HDFS passes it.
    assert index.resolve("127.0.0.1:9866") == index.resolve("localhost") == index.resolve("127.0.0.1") == 0
