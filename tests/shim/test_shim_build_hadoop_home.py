"""`make shim HADOOP_HOME=...` against an install it cannot use stops with ONE clear line, and
builds against a usable one even when Hadoop's own jars carry manifests whose Class-Path names
missing jars (jaxb-api, activation, bcprov in a real 3.3.6: javac's `path` lint).

A fake HADOOP_HOME is made in a temp dir: its bin/hadoop fails, prints nothing, or prints a
classpath; its "Hadoop jars" are the compile-only stubs (deploy/shim/stubs) jarred with the
`jar` tool under Hadoop's jar names, with manifests pointing at jars that do not exist. The
error cases need only make; the builds need a JDK and Debian's Jackson/slf4j jars (the APIs
Hadoop ships), and skip without them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parents[2] / "deploy" / "shim"
SHARE = Path("/usr/share/java")
DEB = [SHARE / j for j in ("jackson-databind.jar", "jackson-core.jar", "jackson-annotations.jar", "slf4j-api.jar")]
HADOOP_JARS = ("hadoop-common-3.3.6.jar", "hadoop-hdfs-3.3.6.jar", "hadoop-hdfs-client-3.3.6.jar",
               "hadoop-yarn-api-3.3.6.jar", "hadoop-yarn-server-resourcemanager-3.3.6.jar")
# Class-Path entries as jaxb-api-2.2.11.jar, activation and bcprov carry them: no such files here.
BAD_MANIFEST = "Class-Path: jaxb-impl.jar jaxb-core.jar jsr173_api.jar ../lib/activation.jar bcprov-ext.jar\n"

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
needs_jdk = pytest.mark.skipif(
    shutil.which("javac") is None or shutil.which("jar") is None or not all(j.is_file() for j in DEB),
    reason="needs a JDK (javac, jar) and Debian's libjackson2-databind-java + libslf4j-java (.ci/run installs them)")


def _make(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HADOOP_HOME", "HADOOP_COMPILE_CLASSPATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "--no-print-directory", "-C", str(SHIM), *args, f"OUT={tmp / 'target'}"],
                          env=env, capture_output=True, text=True, timeout=600)


def _home(tmp: Path, hadoop_script: str) -> Path:
    home = tmp / "hadoop"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "hadoop"
    script.write_text("#!/bin/sh\n" + hadoop_script)
    script.chmod(0o755)
    return home


def _one_line(r: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line, got:\n{r.stdout}{r.stderr}"
    return lines[0]


@needs_make
def test_a_failing_hadoop_script_and_no_jars_is_one_clear_line(tmp_path: Path) -> None:
    home = _home(tmp_path, 'echo "ERROR: JAVA_HOME is not set and could not be found." >&2\nexit 1\n')
    r = _make(tmp_path, "jar", f"HADOOP_HOME={home}")
    assert r.returncode == 2
    line = _one_line(r)
    assert re.fullmatch(
        rf"Makefile:\d+: \*\*\* harvester-shim: cannot read Hadoop's classpath: `{home}/bin/hadoop classpath` "
        rf"failed \(exit 1: ERROR: JAVA_HOME is not set and could not be found\.\) and {home}/share/hadoop has no "
        r"jars; set HADOOP_HOME to a Hadoop 3\.3\.6 install or HADOOP_COMPILE_CLASSPATH to its jars\.  Stop\.", line), line
    assert not (tmp_path / "target").exists(), "nothing was compiled"


@needs_make
def test_an_empty_classpath_is_one_clear_line(tmp_path: Path) -> None:
    home = _home(tmp_path, "exit 0\n")
    r = _make(tmp_path, "jar", f"HADOOP_HOME={home}")
    assert r.returncode == 2
    assert "`" + str(home / "bin" / "hadoop") + " classpath` printed nothing" in _one_line(r)


@needs_make
def test_a_home_that_is_not_a_directory_is_one_clear_line(tmp_path: Path) -> None:
    r = _make(tmp_path, "jar", f"HADOOP_HOME={tmp_path / 'nowhere'}")
    assert r.returncode == 2
    assert f"HADOOP_HOME={tmp_path / 'nowhere'} is not a directory" in _one_line(r)


@needs_make
def test_a_classpath_without_the_needed_jars_names_them(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("hadoop-common-3.3.6.jar", "hadoop-hdfs-client-3.3.6.jar", "slf4j-api-1.7.36.jar"):
        (lib / name).write_bytes(b"")
    home = _home(tmp_path, f'echo "{tmp_path}/etc/hadoop:{lib}/*"\n')
    r = _make(tmp_path, "jar", f"HADOOP_HOME={home}")
    assert r.returncode == 2
    line = _one_line(r)
    assert re.search(r"harvester-shim: Hadoop's classpath \(from `.*/bin/hadoop classpath`\) lacks hadoop-hdfs, "
                     r"hadoop-yarn-api, hadoop-yarn-server-resourcemanager, jackson-databind; set HADOOP_HOME to a "
                     r"Hadoop 3\.3\.6 install or HADOOP_COMPILE_CLASSPATH to its jars\.  Stop\.$", line), line


@needs_make
def test_clean_needs_no_classpath(tmp_path: Path) -> None:
    home = _home(tmp_path, "exit 1\n")
    assert _make(tmp_path, "clean", f"HADOOP_HOME={home}").returncode == 0


def _fake_hadoop_jars(tmp: Path) -> Path:
    """Hadoop's jar names holding the stubs' classes, each with a manifest naming missing jars."""
    classes = tmp / "stub-classes"
    subprocess.run(["javac", "--release", "11", "-nowarn", "-d", str(classes),
                    *map(str, sorted((SHIM / "stubs").rglob("*.java")))], check=True, capture_output=True)
    manifest = tmp / "MANIFEST.MF"
    manifest.write_text(BAD_MANIFEST)
    jars = tmp / "share" / "hadoop" / "common"
    jars.mkdir(parents=True)
    for name in HADOOP_JARS:
        subprocess.run(["jar", "--create", "--file", str(jars / name), "--manifest", str(manifest),
                        "-C", str(classes), "."], check=True, capture_output=True)
    return jars


@needs_make
@needs_jdk
def test_builds_against_jars_whose_manifests_name_missing_jars(tmp_path: Path) -> None:
    jars = _fake_hadoop_jars(tmp_path)
    deb = ":".join(map(str, DEB))
    home = _home(tmp_path, f'echo "{tmp_path}/etc/hadoop:{jars}/*:{deb}"\n')
    r = _make(tmp_path, "jar", f"HADOOP_HOME={home}")
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "bad path element" not in r.stdout + r.stderr
    assert (tmp_path / "target" / "harvester-shim.jar").is_file()


@needs_make
@needs_jdk
def test_a_tarball_without_working_scripts_builds_from_share_hadoop(tmp_path: Path) -> None:
    jars = _fake_hadoop_jars(tmp_path / "hadoop")
    lib = tmp_path / "hadoop" / "share" / "hadoop" / "common" / "lib"
    lib.mkdir()
    for j in DEB:
        shutil.copy(j, lib / j.name)
    home = _home(tmp_path, 'echo "ERROR: JAVA_HOME is not set and could not be found." >&2\nexit 1\n')
    assert jars.parent.parent.parent == home
    r = _make(tmp_path, "jar", f"HADOOP_HOME={home}")
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert f"harvester-shim: `{home}/bin/hadoop classpath` failed (exit 1: ERROR: JAVA_HOME is not set and could " \
           f"not be found.): using the jars under {home}/share/hadoop" in r.stderr
    assert (tmp_path / "target" / "harvester-shim.jar").is_file()


@needs_make
@needs_jdk
def test_an_explicit_compile_classpath_wins(tmp_path: Path) -> None:
    jars = _fake_hadoop_jars(tmp_path)
    cp = f"{jars}/*:" + ":".join(map(str, DEB))
    r = _make(tmp_path, "jar", f"HADOOP_COMPILE_CLASSPATH={cp}")
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert f'-cp "{cp}"' in r.stdout, "compiled against the given classpath, not the stubs"
