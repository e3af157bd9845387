"""Where the live suites find Hadoop's CLIs and jars.

HARVESTER_TEST_HADOOP_HOME names a Hadoop 3.3.6 install: its jars under share/hadoop, its
launchers (`hadoop`, `hdfs`, `yarn`) under bin/. A tarball or package that keeps the launchers
elsewhere (or an unpacked tree without bin/) names their directory in HARVESTER_TEST_HADOOP_BIN;
it is looked in first. Tests that need a launcher nobody provides skip, naming both variables.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

HADOOP_HOME_VAR = "HARVESTER_TEST_HADOOP_HOME"
HADOOP_BIN_VAR = "HARVESTER_TEST_HADOOP_BIN"


def launcher(home: Path, tool: str) -> Path | None:
    """The `tool` launcher (hadoop, hdfs, yarn): in HARVESTER_TEST_HADOOP_BIN, else <home>/bin."""
    dirs = [Path(os.environ[HADOOP_BIN_VAR]).expanduser()] if os.environ.get(HADOOP_BIN_VAR) else []
    for d in [*dirs, home / "bin"]:
        if (d / tool).is_file():
            return d / tool
    return None


def hadoop_home_or_skip(*tools: str) -> Path:
    """The install, with every launcher in `tools` (default: hadoop); skips naming the variable
    to set when one is missing; fails when the variables name something that is not there."""
    raw = os.environ.get(HADOOP_HOME_VAR)
    if not raw:
        pytest.skip(f"needs Hadoop 3.3.6 CLIs/jars: set {HADOOP_HOME_VAR} to a Hadoop install (e.g. /opt/hadoop); "
                    f"for a tarball without the bin/ launcher scripts also set {HADOOP_BIN_VAR} to where they are")
    bin_raw = os.environ.get(HADOOP_BIN_VAR)
    if bin_raw and not Path(bin_raw).expanduser().is_dir():
        pytest.fail(f"{HADOOP_BIN_VAR}={bin_raw} is not a directory")
    home = Path(raw).expanduser()
    if not (home / "share" / "hadoop").is_dir():
        pytest.fail(f"{HADOOP_HOME_VAR}={raw} has no share/hadoop: not a Hadoop install")
    for tool in tools or ("hadoop",):
        if launcher(home, tool) is None:
            where = f"{HADOOP_BIN_VAR}={bin_raw} nor {raw}/bin" if bin_raw else f"{raw}/bin"
            pytest.skip(f"no `{tool}` launcher in {where}: for a Hadoop tarball without the launcher scripts set "
                        f"{HADOOP_BIN_VAR} to the directory holding hadoop, hdfs and yarn")
    return home


def hadoop_classpath(home: Path, env: dict[str, str] | None = None) -> str:
    """`hadoop classpath` of the install (what an operator compiles a plug-in against)."""
    tool = launcher(home, "hadoop")
    assert tool is not None, "hadoop_home_or_skip('hadoop') first"
    run_env = {**(env or os.environ), "HADOOP_HOME": str(home)}
    return subprocess.run([str(tool), "classpath"], env=run_env, check=True, capture_output=True, text=True).stdout.strip()
