"""Where the live suites find Hadoop's launchers (hadoop_cli.py): no cluster needed, not marked
`integration`, so it runs in every suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from hadoop_cli import HADOOP_BIN_VAR, HADOOP_HOME_VAR, hadoop_home_or_skip, launcher


def _install(root: Path, *, bin_tools: tuple[str, ...] = ()) -> Path:
    (root / "share" / "hadoop").mkdir(parents=True)
    for t in bin_tools:
        (root / "bin").mkdir(exist_ok=True)
        (root / "bin" / t).write_text("#!/bin/sh\n")
    return root


def test_an_install_with_its_launchers_is_used_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _install(tmp_path / "hadoop", bin_tools=("hadoop", "yarn"))
    monkeypatch.setenv(HADOOP_HOME_VAR, str(home))
    monkeypatch.delenv(HADOOP_BIN_VAR, raising=False)
    assert hadoop_home_or_skip("hadoop", "yarn") == home and launcher(home, "yarn") == home / "bin" / "yarn"


def test_a_tarball_without_launchers_skips_naming_the_variable_and_then_uses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _install(tmp_path / "tarball")
    monkeypatch.setenv(HADOOP_HOME_VAR, str(home))
    monkeypatch.delenv(HADOOP_BIN_VAR, raising=False)
    with pytest.raises(pytest.skip.Exception, match=HADOOP_BIN_VAR):
        hadoop_home_or_skip("hadoop")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "hadoop").write_text("#!/bin/sh\n")
    monkeypatch.setenv(HADOOP_BIN_VAR, str(scripts))
    assert hadoop_home_or_skip("hadoop") == home and launcher(home, "hadoop") == scripts / "hadoop"
    with pytest.raises(pytest.skip.Exception, match="no `hdfs` launcher"):
        hadoop_home_or_skip("hdfs")


def test_variables_naming_nothing_fail_rather_than_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HADOOP_HOME_VAR, str(tmp_path))
    monkeypatch.delenv(HADOOP_BIN_VAR, raising=False)
    with pytest.raises(pytest.fail.Exception, match="no share/hadoop"):
        hadoop_home_or_skip("hadoop")
    monkeypatch.setenv(HADOOP_BIN_VAR, str(tmp_path / "missing"))
    with pytest.raises(pytest.fail.Exception, match="not a directory"):
        hadoop_home_or_skip("hadoop")
