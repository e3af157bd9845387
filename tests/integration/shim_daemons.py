"""Hadoop 3.3.6 daemons started from a local install for the Java shim's integration tests.

Everything runs on 127.0.0.1 with ports picked free by the test, in a temp dir, as the current
user (root on the test machines), with the Java 17 flags of ../shared/fixtures/README.md in
HADOOP_OPTS. Daemons are started directly (`hdfs namenode`, `yarn resourcemanager`, ...: the
start-*.sh scripts refuse root), each with its own HADOOP_CONF_DIR, and stopped by pid (TERM,
then KILL). Readiness is polled, never slept for.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import hadoop_cli
import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "deploy" / "shim"
JAR = SHIM / "target" / "harvester-shim.jar"

# ../shared/fixtures/README.md, "Running Hadoop 3.3.6 daemons on Java 17".
JAVA17_FLAGS = " ".join(
    [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang", "java.lang.reflect", "java.lang.invoke", "java.io", "java.net", "java.nio", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "java.util.regex", "java.security",
        "javax.security.auth", "sun.nio.ch", "sun.nio.cs", "sun.security.action", "sun.util.calendar")]
    + ["--add-exports=java.base/sun.net.dns=ALL-UNNAMED", "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
       "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED"]
)


def hadoop_home_or_skip(tool: str) -> Path:
    """HARVESTER_TEST_HADOOP_HOME with the `hadoop` and <tool> launchers (in its bin/, or in
    HARVESTER_TEST_HADOOP_BIN: hadoop_cli.py), and a JDK to build the shim; skips without them."""
    home = hadoop_cli.hadoop_home_or_skip("hadoop", tool)
    if subprocess.run(["sh", "-c", "command -v javac"], capture_output=True).returncode != 0:
        pytest.skip("needs a JDK (javac) to build the shim against the install")
    return home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java_home() -> str:
    """JAVA_HOME for Hadoop's scripts: the environment's, else the JDK of `javac` on PATH."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    javac = subprocess.run(["sh", "-c", "readlink -f \"$(command -v javac)\""], capture_output=True, text=True,
                           check=True).stdout.strip()
    return str(Path(javac).parent.parent)


def site_xml(props: Mapping[str, Any]) -> str:
    rows = "".join(f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>\n"
                   for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def wait_for(cond: Callable[[], Any], *, timeout_s: float, what: str, every_s: float = 0.5) -> Any:
    """Poll `cond` until it returns something truthy; fail naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = cond()
        except (requests.RequestException, ValueError, KeyError, OSError) as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what} (last: {last!r})")


def jmx_bean(http_base: str, name: str) -> dict[str, Any] | None:
    r = requests.get(f"{http_base}/jmx", params={"qry": name}, timeout=5)
    r.raise_for_status()
    beans = r.json().get("beans", [])
    return beans[0] if beans else None


def build_shim_jar(hadoop_home: Path) -> Path:
    """The jar compiled against the install's own jars, as an operator would (`make shim
    HADOOP_HOME=...`: `hadoop classpath`, else share/hadoop's jars; docs/shim.md). A launcher kept
    outside bin/ (HARVESTER_TEST_HADOOP_BIN) gives its classpath through HADOOP_COMPILE_CLASSPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_COMPILE_CLASSPATH", "MAKEFLAGS", "MAKELEVEL")}
    env.update({"HADOOP_HOME": str(hadoop_home), "JAVA_HOME": java_home()})
    if not (hadoop_home / "bin" / "hadoop").exists():
        env["HADOOP_COMPILE_CLASSPATH"] = hadoop_cli.hadoop_classpath(hadoop_home, env)
    r = subprocess.run(["make", "--no-print-directory", "-C", str(SHIM), "clean", "jar"], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"building the shim against {hadoop_home} failed:\n{(r.stdout + r.stderr)[-4000:]}")
    return JAR


class Daemons:
    """Processes of one test cluster; `stop()` ends them by pid, newest first."""

    def __init__(self, hadoop_home: Path, base: Path) -> None:
        self.home = hadoop_home
        self.base = base
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def conf(self, name: str, files: Mapping[str, Mapping[str, Any]]) -> Path:
        """A HADOOP_CONF_DIR with the given *-site.xml files plus the install's log4j.properties."""
        d = self.base / "conf" / name
        d.mkdir(parents=True, exist_ok=True)
        for fname, props in files.items():
            (d / fname).write_text(site_xml(props))
        log4j = self.home / "etc" / "hadoop" / "log4j.properties"
        if log4j.is_file():
            (d / "log4j.properties").write_text(log4j.read_text())
        return d

    def env(self, conf_dir: Path, *, classpath: str = "", opts: str = "") -> dict[str, str]:
        logs = self.base / "logs"
        logs.mkdir(exist_ok=True)
        return {**os.environ, "HADOOP_HOME": str(self.home), "JAVA_HOME": java_home(),
                "HADOOP_CONF_DIR": str(conf_dir), "HADOOP_LOG_DIR": str(logs), "HADOOP_PID_DIR": str(self.base),
                "HADOOP_OPTS": f"{JAVA17_FLAGS} {opts}".strip(), "HADOOP_CLASSPATH": classpath,
                "HADOOP_HEAPSIZE_MAX": "512m"}

    def tool(self, name: str) -> str:
        found = hadoop_cli.launcher(self.home, name)
        assert found is not None, f"no `{name}` launcher (hadoop_home_or_skip checks it first)"
        return str(found)

    def run(self, argv: list[str], conf_dir: Path, *, timeout_s: float = 180, check: bool = True,
            **kw: Any) -> subprocess.CompletedProcess[str]:
        """A Hadoop CLI (hdfs dfs, fsck, yarn ...) to completion."""
        return subprocess.run([self.tool(argv[0]), *argv[1:]], env=self.env(conf_dir, **kw),
                              capture_output=True, text=True, timeout=timeout_s, check=check)

    def start(self, name: str, argv: list[str], conf_dir: Path, **kw: Any) -> subprocess.Popen[bytes]:
        out = open(self.base / f"{name}.out", "wb")  # noqa: SIM115 (closed with the process)
        p = subprocess.Popen([self.tool(argv[0]), *argv[1:]], env=self.env(conf_dir, **kw),
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, p))
        return p

    def start_python(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        out = open(self.base / f"{name}.out", "wb")  # noqa: SIM115
        p = subprocess.Popen([sys.executable, *argv], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, p))
        return p

    def kill(self, p: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        if p.poll() is None:
            os.killpg(p.pid, sig)  # the process group we started (start_new_session): never a broad kill
        p.wait(30)

    def tail(self, name: str, lines: int = 40) -> str:
        f = self.base / f"{name}.out"
        return "\n".join(f.read_text(errors="replace").splitlines()[-lines:]) if f.exists() else ""

    def stop(self) -> None:
        for _, p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for _, p in reversed(self.procs):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path
