"""The `hdfs:` settings section (harvester/config_hdfs.py): defaults and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.config import ConfigError, parse_settings


def test_disabled_by_default_and_enabled_with_a_namenode() -> None:
    s = parse_settings({}, environ={})
    assert s.hdfs.enabled is False and s.hdfs.busy_cpu_threshold == 0.9
    s = parse_settings({}, environ={"HARVESTER_HDFS__ENABLED": "true",
                                    "HARVESTER_HDFS__NAMENODE_URLS": "http://nn1:9870,http://nn2:9870"})
    assert s.hdfs.enabled and [str(u) for u in s.hdfs.namenode_urls] == ["http://nn1:9870/", "http://nn2:9870/"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"hdfs": {"enabled": True}}, "hdfs: namenode_urls: missing value (required when enabled is true)"),
        ({"hdfs": {"busy_cpu_threshold": 0.8, "busy_clear_below": 0.9}}, "busy_clear_below (0.9) is above busy_cpu_threshold (0.8)"),
        ({"hdfs": {"reimage_log": "/no/such/reimages.csv"}}, "hdfs.reimage_log: cannot read /no/such/reimages.csv"),
        ({"hdfs": {"detection": {"reset_fraction": 1.5}}}, "hdfs.detection.reset_fraction"),
        ({"hdfs": {"long_poll_max_s": 3600}}, "hdfs.long_poll_max_s"),
        ({"hdfs": {"namenode_urls": ["ftp://nn"]}}, "hdfs.namenode_urls[0]"),
    ],
)
def test_bad_hdfs_settings_are_one_line(data: dict, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_settings(data, environ={})
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_a_readable_reimage_log_is_accepted(tmp_path: Path) -> None:
    log = tmp_path / "r.csv"
    log.write_text("timestamp,hostname\n")
    assert parse_settings({"hdfs": {"reimage_log": str(log)}}, environ={}).hdfs.reimage_log == log
