"""Harvesting end to end on a REAL Hadoop 3.3.6 cluster (the emulator twin:
tests/harvesting/test_e2e_emulator.py).

A distributed-shell app holds containers; CPU burners started OUTSIDE YARN on the same host
play the primary tenant; the real Harvester app (composition root, `cluster.source: rm`,
`actuate: true`, short periods) must see the host's primary usage rise through the RM and
shrink the NodeManagers' capacity; where the new capacity is below a node's allocation the
guard sends overCommitTimeout 0 and the RM must make the allocation fit (youngest non-AM
first), elsewhere it sends -1 and nothing may be killed (tests/support/live_cluster.py checks
every update against the guard's own view of that tick); when the burners stop, the capacity
must come back. Every assertion reads what the RM reports: node `totalResource`, the app's
`runningContainers` and its preemption counters (`numNonAMContainerPreempted`,
`numAMContainerPreempted`), or the guard's decision records.

Runs only when (a) an RM is given (HARVESTER_TEST_RM_URL), (b) a Hadoop install provides the
distributed-shell jar and the `yarn` CLI (HARVESTER_TEST_HADOOP_HOME, HARVESTER_TEST_HADOOP_BIN:
hadoop_cli.py), and (c) the
NodeManagers run on THIS host — their hostnames resolve to a local address, or
HARVESTER_TEST_SAME_HOST=1 says so — because the burners must load the NodeManagers' host.
Otherwise it skips with the reason.

Recorded delays it allows for (fixtures scenarios/cpu-burn): NMs sample every 3 s and the RM
shows a load change 2-7 s late; after an update the RM kills within ~40 ms (T = 0), and the
node's usedResource follows at the next NM heartbeats. The DS app is named with this run's id
and found through the RM (GET /apps?name=&applicationTypes=YARN&startedTimeBegin=), not the
client's log (whose INFO lines depend on its log level). A finalizer restores every node's
capacity (T = -1, kills nothing), kills every app of this run's name (also when the test failed
before it knew the id), the DS client and the burners, so the test can run twice in a row.

A shared host is not idle: the test first measures the host's baseline CPU (the local NMs'
nodeCPUUsage, the whole host in cores) and asserts RELATIVE to what the guard grants at that
baseline: the burn must cut capacity below it, the RM must then make every local node's
allocation fit (other tenants' containers may be the youngest, so whose containers die is not
asserted), and capacity must come back (above what the burn left, or to about the baseline's
grant: the host's other load may have moved meanwhile). It skips, saying why, when the host
is too busy to show the effect (the baseline leaves less than a core, or the guard already grants
nothing before the burn), or when the cluster has no room for the app.
"""

from __future__ import annotations

import os
import random
import re
import socket
import string
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hadoop_cli import launcher
from live_cluster import cut_nodes, find_apps, guard_timeout_problems
from rest_apps import kill_quietly, wait_for

from harvester.app import Harvester
from harvester.config import parse_settings
from rm_client import Node, Resource, RMClient, RMClientConfig, RMError

pytestmark = pytest.mark.integration

SAME_HOST_VAR = "HARVESTER_TEST_SAME_HOST"
WORKERS = 4
OVERCOMMIT_TIMEOUT_MS = 0
# Java 17 needs these for the Hadoop 3.3.6 CLIs (fixtures README, "Running Hadoop 3.3.6 daemons on Java 17").
JAVA17_OPENS = (
    "java.base/java.lang", "java.base/java.lang.reflect", "java.base/java.lang.invoke", "java.base/java.io",
    "java.base/java.net", "java.base/java.nio", "java.base/java.util", "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic", "java.base/java.util.regex", "java.base/java.security",
    "java.base/javax.security.auth", "java.base/sun.nio.ch", "java.base/sun.nio.cs", "java.base/sun.security.action",
    "java.base/sun.util.calendar", "java.security.jgss/sun.security.krb5",
)
JAVA17_EXPORTS = ("java.base/sun.net.dns", "java.base/sun.net.util")


def _local_addresses() -> set[str]:
    addrs = {"127.0.0.1", "::1"}
    for name in {socket.gethostname(), socket.getfqdn(), "localhost"}:
        try:
            addrs |= {ai[4][0] for ai in socket.getaddrinfo(name, None)}
        except OSError:
            pass
    return addrs


def _on_this_host(node: Node, local: set[str]) -> bool:
    try:
        return any(ai[4][0] in local or ai[4][0].startswith("127.") for ai in socket.getaddrinfo(node.host_name, None))
    except OSError:
        return False


def _java_opts() -> str:
    opts = os.environ.get("HADOOP_OPTS", "")
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else Path("java")
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30).stderr
    except OSError:
        return opts
    m = re.search(r'version "(\d+)', out)
    if m and int(m.group(1)) >= 17 and "--add-opens" not in opts:
        opts += "".join(f" --add-opens={p}=ALL-UNNAMED" for p in JAVA17_OPENS)
        opts += "".join(f" --add-exports={p}=ALL-UNNAMED" for p in JAVA17_EXPORTS)
    return opts.strip()


def _ds_jar(home: Path) -> Path:
    jars = sorted(p for p in (home / "share" / "hadoop" / "yarn").glob("hadoop-yarn-applications-distributedshell-*.jar")
                  if not re.search(r"-(tests|sources)\.jar$", p.name))
    if not jars:
        pytest.skip(f"no hadoop-yarn-applications-distributedshell jar under {home}/share/hadoop/yarn")
    return jars[0]


@dataclass
class Scene:
    client: RMClient
    local: list[str]              # NodeManagers on this host
    originals: dict[str, Resource]
    app_id: str
    ds_client: subprocess.Popen[bytes]
    burners: list[subprocess.Popen[bytes]]
    harvester: Harvester | None = None
    app_name: str = ""
    since_ms: int = 0

    def totals(self) -> dict[str, int]:
        nodes = {n.id: n for n in self.client.list_nodes()}
        return {i: nodes[i].total_resource.vcores for i in self.local}  # type: ignore[union-attr]

    def app(self):  # type: ignore[no-untyped-def]
        return self.client.get_app(self.app_id)


def _launch_ds(home: Path, live: object, tmp: Path, queue: str, name: str) -> tuple[subprocess.Popen[bytes], Path]:
    """The recorded client command (scenarios/signal-and-kill client log): sleep 600 in N
    containers, named `name` (-appname) so that the RM can tell this run's app from any other."""
    jar = _ds_jar(home)
    yarn = launcher(home, "yarn")
    if yarn is None:
        pytest.skip("no `yarn` launcher: set HARVESTER_TEST_HADOOP_BIN to the directory holding it")
    cmd = [str(yarn), "jar", str(jar), "-jar", str(jar), "-appname", name, "-queue", queue,
           "-shell_command", "sleep", "-shell_args", "600", "-num_containers", str(WORKERS),
           "-container_memory", "1024", "-container_vcores", "1"]
    env = dict(os.environ, HADOOP_USER_NAME=live.user, HADOOP_OPTS=_java_opts(), HADOOP_HOME=str(home))  # type: ignore[attr-defined]
    if live.conf_dir is not None:  # type: ignore[attr-defined]
        env["HADOOP_CONF_DIR"] = str(live.conf_dir)  # type: ignore[attr-defined]
    log = tmp / "ds-client.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    return proc, log


def _app_id(client: RMClient, name: str, since_ms: int, log: Path, proc: subprocess.Popen[bytes]) -> str:
    """This run's DS app, as the RM lists it (never the client's log lines: their level varies)."""
    def probe() -> str | None:
        apps = find_apps(client, name=name, application_type="YARN", started_since_ms=since_ms)
        if apps:
            return apps[0].id
        if proc.poll() is not None:
            raise AssertionError(f"the DS client exited {proc.returncode} and the RM lists no app named {name}: "
                                 f"{log.read_text(errors='replace')[-2000:]}")
        return None

    return wait_for(probe, timeout_s=120, what=f"the RM to list the DS app {name}")


def _restore(scene_client: RMClient, originals: dict[str, Resource]) -> None:
    for node_id, res in originals.items():
        try:
            scene_client.update_node_resource(node_id, Resource(res.memory_mb, res.vcores), -1,
                                              allow_zero=res.memory_mb == 0 or res.vcores == 0)
        except RMError:
            pass


def _baseline_cores(client: RMClient, local: list[str], seconds: float = 12.0) -> float:
    """The host's busy cores before the test adds load: median of the local NMs' nodeCPUUsage
    (each reports the whole host) over a few 3-s monitor samples."""
    samples = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for n in client.list_nodes():
            if n.id in local and n.resource_utilization is not None:
                samples.append(n.resource_utilization.node_cpu_cores)
        time.sleep(1.0)
    return statistics.median(samples) if samples else 0.0


@pytest.fixture()
def scene(live_hadoop: object, requires_hadoop_home: Path, submit_queue: str, tmp_path: Path) -> Iterator[Scene]:
    client = RMClient(RMClientConfig(urls=(live_hadoop.rm_url,), user=live_hadoop.user, read_timeout_s=30.0))  # type: ignore[attr-defined]
    running = client.list_nodes(states=["RUNNING"])
    forced = os.environ.get(SAME_HOST_VAR) == "1"
    local_addrs = _local_addresses()
    local = sorted(n.id for n in running if forced or _on_this_host(n, local_addrs))
    if not local:
        client.close()
        pytest.skip(f"no NodeManager runs on this host ({', '.join(n.host_name for n in running) or 'none RUNNING'} "
                    f"do not resolve to {sorted(local_addrs)}); burners here cannot load them. "
                    f"Set {SAME_HOST_VAR}=1 if they do.")
    originals = {n.id: n.total_resource for n in running if n.id in local and n.total_resource is not None}
    cores = os.cpu_count() or 1
    baseline = _baseline_cores(client, local)
    if cores - baseline < 1.0:
        client.close()
        pytest.skip(f"host too busy to show the effect: {baseline:.2f} of its {cores} cores are busy before the test")
    name = "harvester-it-ds-" + "".join(random.choices(string.ascii_lowercase, k=8))
    since_ms = int(time.time() * 1000) - 60_000  # the RM's clock may be behind ours (a minute of skew)
    proc, log = _launch_ds(requires_hadoop_home, live_hadoop, tmp_path, submit_queue, name)
    s = Scene(client, local, originals, "", proc, [], app_name=name, since_ms=since_ms)
    try:
        s.app_id = _app_id(client, name, since_ms, log, proc)
        try:
            wait_for(lambda: s.app().state == "RUNNING" and (s.app().running_containers or 0) >= 2,
                     timeout_s=180, what=f"{s.app_id} RUNNING with its AM and a worker")
        except AssertionError as err:
            pytest.skip(f"the cluster gave the DS app no room for its AM and a worker within 180 s ({err})")
        yield s
    finally:
        if s.harvester is not None:
            s.harvester.stop()
        for b in s.burners:
            b.kill()
            b.wait(timeout=10)
        try:  # every app of this run's name, also one submitted after a failure to find it
            mine = {a.id for a in find_apps(client, name=name, application_type="YARN", started_since_ms=since_ms)}
        except RMError:
            mine = set()
        for app_id in mine | ({s.app_id} if s.app_id else set()):
            kill_quietly(client, app_id)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        _restore(client, originals)
        client.close()


def _harvester(live: object, local: list[str]) -> Harvester:
    settings = parse_settings({
        "server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.5},
        "store": {"backend": "memory"},
        "cluster": {"source": "rm"},
        "rm": {"urls": [live.rm_url], "user": live.user},  # type: ignore[attr-defined]
        "telemetry": {"poll_interval_s": 2, "stale_after_s": 20},
        "harvesting": {
            "actuate": True,
            "tenants": [{"tenant": "burner-host", "environment": "it", "nodes": local}],
            "unmatched_nodes": "ignore",                  # never touch NodeManagers on other hosts
            "node_resources": {"physical_cores": os.cpu_count() or 1},
            "control_period_s": 1,
            "guard": {"min_interval_s": 5, "kill_mechanism": "rm_overcommit",
                      "overcommit_timeout_ms": OVERCOMMIT_TIMEOUT_MS},
        },
    }, environ={})
    app = Harvester(settings)
    app.start()
    return app


def _ams_on(client: RMClient, node_id: str) -> int:
    """Live apps whose AM runs on `node_id` (an AM container holds 1 vcore in these apps)."""
    return sum(1 for a in client.list_apps(states=("RUNNING", "ACCEPTED")) if a.master_node_id == node_id)


def test_primary_burn_shrinks_capacity_the_rm_kills_and_capacity_returns(scene: Scene, live_hadoop: object) -> None:
    scene.harvester = _harvester(live_hadoop, scene.local)
    guard = scene.harvester.loop("guard")
    wait_for(lambda: guard.status()["last_summary"].get("acted") and guard.status()["last_summary"].get("nodes"),
             timeout_s=60, what="the guard's first decision on the real cluster")

    def settled() -> dict[str, int] | None:
        """The RM reports, for every local node, the capacity the guard last decided for it."""
        view = {v.node_id: v.capacity_after for v in scene.harvester.state.view().guard.nodes}  # type: ignore[union-attr]
        t = scene.totals()
        return t if all(view.get(i) is not None and view[i].vcores == v for i, v in t.items()) else None

    # the cut at the baseline (cold-start reserve 20 %) reaches the RM at its next node update
    idle = wait_for(settled, timeout_s=60, what=f"the RM to report the capacity the guard decided for {scene.local}")
    assert all(v <= scene.originals[i].vcores for i, v in idle.items()), idle
    if not any(v > 0 for v in idle.values()):
        pytest.skip(f"host too busy to show the effect: at its baseline load the guard already grants YARN "
                    f"{idle} vcores on {scene.local}")
    preempted_before = scene.app().num_non_am_container_preempted or 0

    # the primary: one busy loop per core, outside YARN (scenarios/cpu-burn: `while True: pass`)
    scene.burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    # host CPU ≈ all cores → harvestable = cores − primary − reserve falls below the baseline's grant
    cut = wait_for(lambda: (lambda t: t if all(t[i] < idle[i] for i in idle if idle[i] > 0) else None)(scene.totals()),
                   timeout_s=60, what=f"the RM to report less than {idle} vcores on {scene.local} while the host burns")

    # What the guard sent follows what it saw at each tick: overCommitTimeout 0 where the new capacity
    # was below the node's allocation, -1 elsewhere (a node may hold less than its cut: nothing to kill)
    records = scene.harvester.store.decisions(loop="guard", limit=1000)
    assert guard_timeout_problems(records, OVERCOMMIT_TIMEOUT_MS) == []
    killing = sorted(cut_nodes(records) & set(scene.local))
    if killing:
        # T = 0: the RM kills the youngest non-AM containers until each allocation fits
        wait_for(lambda: all(n.used_vcores <= n.total_resource.vcores + _ams_on(scene.client, n.id)  # type: ignore[union-attr]
                             for n in scene.client.list_nodes() if n.id in killing),
                 timeout_s=30, what=f"the RM to make the allocation of {killing} fit (only AMs may stay above)")
    app = scene.app()
    # The guard's AM floor is issue 16's; a live run on an idle host found the AM preempted.
    assert (app.num_am_container_preempted or 0) == 0, "the RM never kills the ApplicationMaster"
    if killing and (app.num_non_am_container_preempted or 0) > preempted_before:
        assert (app.preempted_resource_mb or 0) >= 1024

    # the primary stops: the RM sees the load fall 1-7 s later, increases wait min_interval_s (5 s)
    for b in scene.burners:
        b.kill()
        b.wait(timeout=10)
    scene.burners = []

    def recovered() -> dict[str, int] | None:
        # back to about the baseline's grant, or at least above what the burn left: the host's other
        # load (a shared host) may have moved since the baseline was taken
        t = scene.totals()
        return t if all(v >= min(idle[i] - 1, cut[i] + 1) for i, v in t.items()) else None

    wait_for(recovered, timeout_s=90, what=f"capacity to come back above {cut} (baseline grant {idle})")
