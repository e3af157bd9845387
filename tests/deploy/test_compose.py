"""docker-compose.yml, deploy/hadoop/, the sidecar's settings and the Prometheus/Grafana wiring
agree with each other (nothing here runs Docker: see test_docker_build.py for that).

Each test names the two files that must agree, so a drift reads as "X says A, Y says B".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harvester.config import Settings, load_settings
from harvester.preflight import preflight

from deploy_files import COMPOSE_SETTINGS, HADOOP_DIR, ROOT, Mount, Port

HADOOP_IMAGE = "apache/hadoop:3.3.6"
HADOOP_CONF_TARGET = "/opt/hadoop/etc/hadoop"
HADOOP_COMMANDS = {
    "namenode": ["hdfs", "namenode"],
    "datanode": ["hdfs", "datanode"],
    "resourcemanager": ["yarn", "resourcemanager"],
    "nodemanager": ["yarn", "nodemanager"],
}
# The image's entrypoint turns variables named <file>.<ext>_<key> with these extensions into
# config files inside /opt/hadoop/etc/hadoop (apache/hadoop docker-hadoop-runner, envtoconf.py);
# with that folder mounted read-only such a variable would break the container's start.
ENVTOCONF_FORMATS = {"xml", "properties", "yaml", "yml", "env", "sh", "cfg", "conf"}


def _port_of(address: str) -> int:
    host, _, port = address.rpartition(":")
    assert host and port.isdigit(), f"{address!r} is not host:port"
    return int(port)


def _published(ports: list[Port], service: str) -> set[int]:
    return {p.container_port for p in ports if p.service == service}


def _mount(mounts: list[Mount], service: str, source: str) -> Mount:
    found = [m for m in mounts if m.service == service and m.source == source]
    assert len(found) == 1, f"docker-compose.yml: {service} should mount {source} exactly once, found {found}"
    return found[0]


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


# --- compose structure --------------------------------------------------------------------

def test_every_bind_mounted_host_path_exists_in_the_repo(mounts: list[Mount]) -> None:
    binds = [m for m in mounts if m.is_bind]
    assert binds, "no bind mounts parsed: has the compose file's volume syntax changed?"
    for m in binds:
        path = (ROOT / m.source).resolve()
        assert path.is_relative_to(ROOT), f"{m.service}: {m.source} is outside the repository"
        assert path.exists(), f"{m.service}: bind-mounted {m.source} does not exist"


def test_named_volumes_are_declared(compose: dict[str, Any], mounts: list[Mount]) -> None:
    declared = set(compose.get("volumes") or {})
    used = {m.source for m in mounts if not m.is_bind}
    assert used <= declared, f"volumes used but not declared at the top level: {sorted(used - declared)}"


def test_ports_are_published_on_loopback_only(ports: list[Port]) -> None:
    assert ports
    for p in ports:
        assert p.host_ip == "127.0.0.1", f"{p.service}: port {p.host_port} is published on {p.host_ip or 'all interfaces'}"


@pytest.mark.parametrize("name", sorted(HADOOP_COMMANDS))
def test_hadoop_services_run_the_official_image_with_the_conf_dir(
    name: str, services: dict[str, dict[str, Any]], mounts: list[Mount]
) -> None:
    svc = services[name]
    assert svc["image"] == HADOOP_IMAGE
    assert svc["command"] == HADOOP_COMMANDS[name]
    assert svc.get("hostname") == name, f"{name}: hostname must equal the service name the XML refers to"
    conf = _mount(mounts, name, "./deploy/hadoop")
    assert (conf.target, conf.read_only) == (HADOOP_CONF_TARGET, True)
    for var in _env(svc):
        parts = re.split(r"[_.]", var)
        assert len(parts) < 2 or parts[1].lower() not in ENVTOCONF_FORMATS, (
            f"{name}: {var} would make the image's envtoconf.py write into the read-only {HADOOP_CONF_TARGET}"
        )


def test_namenode_formats_exactly_the_configured_name_dir_on_its_volume(
    services: dict[str, dict[str, Any]], mounts: list[Mount], hadoop_conf: Callable[[str], dict[str, str]]
) -> None:
    hdfs = hadoop_conf("hdfs-site.xml")
    assert _env(services["namenode"])["ENSURE_NAMENODE_DIR"] == hdfs["dfs.namenode.name.dir"]
    for service, key in (("namenode", "dfs.namenode.name.dir"), ("datanode", "dfs.datanode.data.dir")):
        volumes = [m.target for m in mounts if m.service == service and not m.is_bind]
        assert any(hdfs[key].startswith(t.rstrip("/") + "/") for t in volumes), (
            f"hdfs-site.xml {key}={hdfs[key]} is not on a named volume of {service} ({volumes})"
        )


def test_published_hadoop_ports_are_the_ones_the_xml_configures(
    services: dict[str, dict[str, Any]], ports: list[Port], hadoop_conf: Callable[[str], dict[str, str]]
) -> None:
    yarn, hdfs = hadoop_conf("yarn-site.xml"), hadoop_conf("hdfs-site.xml")
    rm_web = _port_of(yarn["yarn.resourcemanager.webapp.address"])
    assert _published(ports, "resourcemanager") == {rm_web}
    assert _published(ports, "namenode") == {_port_of(hdfs["dfs.namenode.http-address"])}
    assert _published(ports, "nodemanager") == {_port_of(yarn["yarn.nodemanager.webapp.address"])}
    rm_check = " ".join(services["resourcemanager"]["healthcheck"]["test"])
    assert f"localhost:{rm_web}/ws/v1/cluster/info" in rm_check, "the RM healthcheck must use the RM's REST port"


# --- the sidecar --------------------------------------------------------------------------

@pytest.mark.parametrize("relpath", ["deploy/harvester.yaml", "deploy/compose/harvester.yaml", "deploy/docker/harvester.yaml"])
def test_settings_files_validate(relpath: str, tmp_path: Path) -> None:
    """... and pass the preflight `serve` runs (the containers listen on 0.0.0.0: without their
    explicit `allow_insecure_remote` the images would refuse to start). Not binding: the fixed
    ports may be taken on a test machine; the store is put in a temporary folder."""
    settings = load_settings(ROOT / relpath, environ={})
    assert isinstance(settings, Settings)
    settings = settings.model_copy(update={"store": settings.store.model_copy(update={"path": tmp_path / "h.db"})})
    preflight(settings, environ={})


def test_sidecar_polls_the_resourcemanager_service(
    compose_settings: Settings, services: dict[str, dict[str, Any]], hadoop_conf: Callable[[str], dict[str, str]]
) -> None:
    yarn = hadoop_conf("yarn-site.xml")
    assert compose_settings.cluster.source == "rm"
    rm_host = yarn["yarn.resourcemanager.hostname"]
    web_host, _, web_port = yarn["yarn.resourcemanager.webapp.address"].rpartition(":")
    assert web_host == rm_host and services["resourcemanager"]["hostname"] == rm_host
    urls = [(u.host, u.port) for u in compose_settings.rm.urls]
    assert urls == [(rm_host, int(web_port))], f"{COMPOSE_SETTINGS.name} rm.urls {urls} vs yarn-site.xml {rm_host}:{web_port}"
    depends = services["harvester"]["depends_on"]
    assert depends["resourcemanager"]["condition"] == "service_healthy"


def test_sidecar_service_reads_the_compose_settings_and_publishes_their_ports(
    compose_settings: Settings, services: dict[str, dict[str, Any]], mounts: list[Mount], ports: list[Port]
) -> None:
    svc = services["harvester"]
    config_path = svc["command"][svc["command"].index("--config") + 1]
    settings_mount = _mount(mounts, "harvester", "./deploy/compose/harvester.yaml")
    assert (settings_mount.target, settings_mount.read_only) == (config_path, True)
    assert config_path.startswith("/etc/harvester/")
    server = compose_settings.server
    for listen in (server.grpc_listen, server.admin_listen):
        assert listen.startswith("0.0.0.0:"), f"{listen}: a container must listen on all its interfaces"
    assert _published(ports, "harvester") == {_port_of(server.grpc_listen), _port_of(server.admin_listen)}


# --- Prometheus and Grafana wiring ----------------------------------------------------------

def _flag(command: list[str], name: str) -> str:
    values = [c.split("=", 1)[1] for c in command if c.startswith(f"--{name}=")]
    assert len(values) == 1, f"--{name} must be given once in the prometheus command"
    return values[0]


def test_prometheus_scrapes_the_sidecar_admin_port(
    compose_settings: Settings, services: dict[str, dict[str, Any]], mounts: list[Mount], ports: list[Port]
) -> None:
    cmd = services["prometheus"]["command"]
    config_target = _flag(cmd, "config.file")
    config_mount = [m for m in mounts if m.service == "prometheus" and m.target == config_target]
    assert config_mount and config_mount[0].read_only, f"prometheus reads {config_target}, which is not mounted"
    prom = yaml.safe_load((ROOT / config_mount[0].source).read_text())
    [job] = [j for j in prom["scrape_configs"] if j["job_name"] == "harvester"]
    targets = [t for sc in job["static_configs"] for t in sc["targets"]]
    assert targets == [f"harvester:{_port_of(compose_settings.server.admin_listen)}"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    mounted = {m.target for m in mounts if m.service == "prometheus"}
    assert set(prom["rule_files"]) <= mounted, "every rule file prometheus.yml names must be mounted"
    assert _published(ports, "prometheus") == {_port_of(_flag(cmd, "web.listen-address"))}


def test_grafana_uses_the_prometheus_service_and_the_mounted_dashboards(
    services: dict[str, dict[str, Any]], mounts: list[Mount], ports: list[Port]
) -> None:
    prom_port = _port_of(_flag(services["prometheus"]["command"], "web.listen-address"))
    datasources = yaml.safe_load((ROOT / "deploy/grafana/provisioning/datasources/prometheus.yml").read_text())["datasources"]
    [ds] = [d for d in datasources if d["type"] == "prometheus"]
    assert ds["url"] == f"http://prometheus:{prom_port}"
    providers = yaml.safe_load((ROOT / "deploy/grafana/provisioning/dashboards/harvester.yml").read_text())["providers"]
    dash_mount = _mount(mounts, "grafana", "./deploy/grafana/dashboards")
    assert [p["options"]["path"] for p in providers] == [dash_mount.target]
    env = _env(services["grafana"])
    assert _published(ports, "grafana") == {int(env["GF_SERVER_HTTP_PORT"])}
    home = env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home.startswith(dash_mount.target + "/") and (ROOT / "deploy/grafana/dashboards" / Path(home).name).is_file()
    for dashboard in (ROOT / "deploy/grafana/dashboards").glob("*.json"):
        panels = [p for p in json.loads(dashboard.read_text())["panels"] if p["type"] != "row"]  # rows query nothing
        uids = {p["datasource"]["uid"] for p in panels} | {t["datasource"]["uid"] for p in panels for t in p["targets"]}
        assert uids == {ds["uid"]}, f"{dashboard.name} uses datasources {uids}, provisioned: {ds['uid']}"


# --- Hadoop configuration -----------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.name for p in HADOOP_DIR.glob("*.xml")))
def test_hadoop_xml_parses(name: str, hadoop_conf: Callable[[str], dict[str, str]]) -> None:
    assert hadoop_conf(name), f"{name} sets nothing"


REQUIRED = [
    ("core-site.xml", "hadoop.caller.context.enabled", "true"),
    ("yarn-site.xml", "yarn.resourcemanager.reservation-system.enable", "true"),
    ("yarn-site.xml", "yarn.resourcemanager.scheduler.class",
     "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"),
    ("yarn-site.xml", "yarn.nodemanager.resource-monitor.interval-ms", "3000"),
    ("yarn-site.xml", "yarn.nodemanager.aux-services", ""),
    ("capacity-scheduler.xml", "yarn.scheduler.capacity.resource-calculator",
     "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"),
    ("capacity-scheduler.xml", "yarn.scheduler.capacity.root.default.reservable", "true"),
    ("hdfs-site.xml", "dfs.permissions.enabled", "false"),
    ("mapred-site.xml", "mapreduce.framework.name", "yarn"),
]


@pytest.mark.parametrize(("file", "key", "value"), REQUIRED, ids=[k for _, k, _ in REQUIRED])
def test_hadoop_required_property(file: str, key: str, value: str, hadoop_conf: Callable[[str], dict[str, str]]) -> None:
    assert hadoop_conf(file).get(key) == value, f"{file}: {key} must be {value!r}"


def test_namenode_address_and_replication_match_the_compose_services(
    services: dict[str, dict[str, Any]], hadoop_conf: Callable[[str], dict[str, str]]
) -> None:
    hdfs = hadoop_conf("hdfs-site.xml")
    assert hadoop_conf("core-site.xml")["fs.defaultFS"] == f"hdfs://{hdfs['dfs.namenode.rpc-address']}"
    assert hdfs["dfs.namenode.rpc-address"].rpartition(":")[0] == services["namenode"]["hostname"]
    datanodes = [n for n, s in services.items() if s.get("command") == HADOOP_COMMANDS["datanode"]]
    assert int(hdfs["dfs.replication"]) == len(datanodes), "replication must not exceed the DataNodes"


# Keys of the CapacityScheduler that are not per queue (all others must name a queue by path).
CS_GLOBAL_KEYS = {
    "resource-calculator", "maximum-applications", "maximum-am-resource-percent",
    "queue-mappings", "queue-mappings-override.enable", "node-locality-delay",
    # multi-node placement (docs/shim.md): global switch, policy names and their classes
    "multi-node-placement-enabled", "multi-node-sorting.policy.names", "multi-node-sorting.policy.harvester.class",
    "multi-node-sorting.policy.harvester.sorting-interval.ms",
}


def test_capacity_scheduler_keys_use_full_queue_paths(hadoop_conf: Callable[[str], dict[str, str]]) -> None:
    """A per-queue key must name a declared queue by its full path (fixtures README, "Queues"):
    "yarn.scheduler.capacity.default.reservable" would be silently ignored by the RM."""
    cs = hadoop_conf("capacity-scheduler.xml")
    prefix = "yarn.scheduler.capacity."
    children = [q.strip() for q in cs[prefix + "root.queues"].split(",")]
    queues = ["root", *(f"root.{q}" for q in children)]
    assert "root.default" in queues
    assert sum(float(cs[f"{prefix}{q}.capacity"]) for q in queues[1:]) == 100.0
    for key in cs:
        assert key.startswith(prefix), key
        rest = key[len(prefix):]
        if rest in CS_GLOBAL_KEYS:
            continue
        owner = max((q for q in queues if rest.startswith(q + ".")), key=len, default=None)
        assert owner is not None, f"capacity-scheduler.xml: {key} names no declared queue by full path ({queues})"


def test_mapreduce_runs_without_the_shuffle_service(hadoop_conf: Callable[[str], dict[str, str]]) -> None:
    if "mapreduce_shuffle" not in hadoop_conf("yarn-site.xml")["yarn.nodemanager.aux-services"]:
        assert hadoop_conf("mapred-site.xml")["mapreduce.job.ubertask.enable"] == "true", (
            "no shuffle service on the NodeManager: MapReduce jobs must run in uber mode"
        )


def test_namenode_audit_log_is_on() -> None:
    props = dict(
        line.split("=", 1) for line in (HADOOP_DIR / "log4j.properties").read_text().splitlines()
        if "=" in line and not line.lstrip().startswith("#")
    )
    logger = props["log4j.logger.org.apache.hadoop.hdfs.server.namenode.FSNamesystem.audit"]
    level, *appenders = [s.strip() for s in logger.split(",")]
    assert level == "INFO" and appenders, "the audit logger must log INFO to an appender"
    for appender in appenders:
        assert props[f"log4j.appender.{appender}"] != "org.apache.log4j.varia.NullAppender"
        assert props[f"log4j.appender.{appender}.File"].endswith("hdfs-audit.log")
