"""A throw-away Hadoop 3.3.6 cluster in Docker for the integration fixtures (testcontainers).

The same layout as docker-compose.yml: the official `apache/hadoop:3.3.6` image, one container
per daemon on a private network whose aliases are the compose service names (the host names
deploy/hadoop/*.xml refer to), and deploy/hadoop/ as the whole configuration. Differences from
compose: the configuration is copied into the containers before they start (works with a remote
Docker engine too), only the ResourceManager's REST port is published (on a random host port),
and everything, data included, is removed by `stop()`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import requests
from testcontainers.core.container import DockerContainer
from testcontainers.core.network import Network

log = logging.getLogger(__name__)

IMAGE = "apache/hadoop:3.3.6"
CONF_IN_IMAGE = "/opt/hadoop/etc/hadoop"
RM_WEB_PORT = 8088  # yarn.resourcemanager.webapp.address in deploy/hadoop/yarn-site.xml


class ClusterStartError(RuntimeError):
    """The containers did not become a working cluster; the message carries the daemons' logs."""


def docker_engine_problem() -> str | None:
    """None when a Docker engine answers a ping (the engine testcontainers will use), else why not."""
    try:
        import docker  # testcontainers' own client library
    except ImportError as exc:
        return f"the docker Python package is missing: {exc}"
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # any failure means "no usable engine": the reason is reported, not hidden
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"{type(exc).__name__}: {first_line}"
    return None


@dataclass(frozen=True)
class _Daemon:
    alias: str  # compose service name = host name = network alias
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


# Start order: HDFS first (the NodeManager and apps need it), then YARN.
_DAEMONS = (
    _Daemon(
        "namenode",
        ("hdfs", "namenode"),
        # The image's entrypoint formats the NameNode while dfs.namenode.name.dir is missing.
        (("ENSURE_NAMENODE_DIR", "/data/dfs/name"), ("ENSURE_NAMENODE_CLUSTERID", "harvester-test")),
    ),
    _Daemon("datanode", ("hdfs", "datanode")),
    _Daemon("resourcemanager", ("yarn", "resourcemanager")),
    _Daemon("nodemanager", ("yarn", "nodemanager")),
)


class HadoopCluster:
    """NameNode, DataNode, ResourceManager and one NodeManager, started and stopped together."""

    def __init__(self, conf_dir: Path, *, image: str = IMAGE, ready_timeout_s: float = 300.0) -> None:
        self._conf_files = sorted(p for p in conf_dir.iterdir() if p.is_file())
        if not any(p.name == "yarn-site.xml" for p in self._conf_files):
            raise ValueError(f"{conf_dir} holds no yarn-site.xml: not a Hadoop configuration folder")
        self._image = image
        self._ready_timeout_s = ready_timeout_s
        self._network: Network | None = None
        self._containers: dict[str, DockerContainer] = {}

    def start(self) -> str:
        """Start every daemon and wait for a RUNNING NodeManager; returns the RM REST base URL."""
        try:
            self._network = Network().create()
            for daemon in _DAEMONS:
                container = (
                    DockerContainer(self._image, hostname=daemon.alias)
                    .with_network(self._network)
                    .with_network_aliases(daemon.alias)
                    .with_command(list(daemon.command))
                    .with_env("HADOOP_HEAPSIZE_MAX", "512m")
                )
                for key, value in daemon.env:
                    container.with_env(key, value)
                for conf in self._conf_files:
                    container.with_copy_into_container(conf, f"{CONF_IN_IMAGE}/{conf.name}")
                if daemon.alias == "resourcemanager":
                    container.with_exposed_ports(RM_WEB_PORT)
                container.start()
                self._containers[daemon.alias] = container
            rm = self._containers["resourcemanager"]
            rm_url = f"http://{rm.get_container_host_ip()}:{rm.get_exposed_port(RM_WEB_PORT)}"
        except Exception as exc:  # docker API, image pull, port lookup: report with the logs so far
            raise ClusterStartError(f"{type(exc).__name__}: {exc}{self._log_tails()}") from exc
        self._wait_for_running_node(rm_url)
        return rm_url

    def _wait_for_running_node(self, rm_url: str) -> None:
        deadline = time.monotonic() + self._ready_timeout_s
        last = "no answer yet"
        while time.monotonic() < deadline:
            try:
                resp = requests.get(f"{rm_url}/ws/v1/cluster/nodes", headers={"Accept": "application/json"}, timeout=5)
                if resp.status_code == 200:
                    nodes = ((resp.json().get("nodes") or {}).get("node")) or []
                    if any(n.get("state") == "RUNNING" for n in nodes):
                        return
                    last = f"nodes: {[(n.get('id'), n.get('state')) for n in nodes]}"
                else:
                    last = f"HTTP {resp.status_code}"
            except (requests.RequestException, ValueError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            time.sleep(2.0)
        raise ClusterStartError(
            f"no RUNNING NodeManager on {rm_url}/ws/v1/cluster/nodes after {self._ready_timeout_s:.0f} s "
            f"(last: {last}){self._log_tails()}"
        )

    def _log_tails(self, lines: int = 40) -> str:
        out = []
        for alias, container in self._containers.items():
            try:
                stdout, stderr = container.get_logs()
                text = (stdout + stderr).decode(errors="replace").splitlines()[-lines:]
            except Exception as exc:  # the container may already be gone
                text = [f"<no logs: {exc}>"]
            out.append(f"\n--- {alias} (last {lines} lines) ---\n" + "\n".join(text))
        return "".join(out)

    def stop(self) -> None:
        """Remove the containers (with their volumes) and the network; safe to call twice."""
        for alias in reversed(list(self._containers)):
            try:
                self._containers.pop(alias).stop()
            except Exception as exc:  # keep removing the others; say what was left behind
                log.warning("could not remove the %s container: %s", alias, exc)
        if self._network is not None:
            try:
                self._network.remove()
            except Exception as exc:
                log.warning("could not remove the test network: %s", exc)
            self._network = None
