"""The operator reimage log (CSV timestamp,hostname[,tenant])."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.telemetry.reimage_log import ReimageLogError, load_reimage_log, parse_timestamp


def test_reads_iso_epoch_and_millisecond_times_and_optional_tenants(tmp_path: Path) -> None:
    p = tmp_path / "reimages.csv"
    p.write_text(
        "# exported from the fleet manager\n"
        "hostname,timestamp,tenant,ticket\n"
        "search-017,2026-11-02T04:10:00Z,search/index,T-1\n"
        "\n"
        "web-003,1795431979,,T-2\n"
        "web-004,1795431979500,web,T-3\n"
        "db-1,2026-11-02T05:00:00+01:00,,\n"
    )
    got = load_reimage_log(p)
    assert [(e.hostname, e.time, e.tenant, e.source) for e in got] == [
        ("search-017", 1793592600.0, "search/index", "log"),
        ("web-003", 1795431979.0, "", "log"),
        ("web-004", 1795431979.5, "web", "log"),
        ("db-1", 1793592000.0, "", "log"),
    ]
    assert got[0].reason == "reimages.csv:3", "each event says where it came from"


def test_naive_iso_times_are_utc() -> None:
    assert parse_timestamp("2026-11-02T04:10:00") == parse_timestamp("2026-11-02T04:10:00Z")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("time,host\n1,a\n", "header lacks timestamp, hostname"),
        ("timestamp,hostname\nyesterday,a\n", r"reimages.csv:2: timestamp 'yesterday'"),
        ("timestamp,hostname\n1,\n", "reimages.csv:2: empty hostname"),
        ("timestamp,hostname,tenant\n1\n", "reimages.csv:2: expected at least 2 fields"),
        ("timestamp,hostname\n-5,a\n", "reimages.csv:2"),
    ],
)
def test_a_malformed_row_fails_the_whole_read_naming_the_line(tmp_path: Path, text: str, expected: str) -> None:
    p = tmp_path / "reimages.csv"
    p.write_text(text)
    with pytest.raises(ReimageLogError, match=expected):
        load_reimage_log(p)


def test_missing_file_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ReimageLogError, match="cannot read"):
        load_reimage_log(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("# nothing yet\n")
    assert load_reimage_log(tmp_path / "empty.csv") == []
