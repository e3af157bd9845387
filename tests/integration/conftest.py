"""Session fixtures for tests that need a live Hadoop 3.3.6 (marked `integration`).

Contract used by every integration suite:
- `live_hadoop` -> `LiveHadoop(rm_url, hadoop_home, conf_dir, user)`, session scoped;
- `rm_url` -> the ResourceManager's REST base URL (`live_hadoop.rm_url`);
- `requires_hadoop_home` -> Path of a Hadoop install with its CLIs and jars (skips without it;
  the launchers may live elsewhere, named by HARVESTER_TEST_HADOOP_BIN: hadoop_cli.py).

Where the cluster comes from, in this order:
(a) `HARVESTER_TEST_RM_URL` names a running ResourceManager (REST base, e.g.
    http://127.0.0.1:8088 for docker-compose.yml); optional `HARVESTER_TEST_HADOOP_HOME`,
    `HARVESTER_TEST_HADOOP_CONF_DIR` (client-side Hadoop install and configuration),
    `HARVESTER_TEST_HADOOP_BIN` (the launcher scripts' directory, for an install without bin/),
    `HARVESTER_TEST_USER` (the user for `?user.name=` and the CLIs; default: the OS user),
    `HARVESTER_TEST_PLAN_QUEUE` (the reservable queue to use, full path; default: the first the
    RM's /scheduler shows) and `HARVESTER_TEST_QUEUE` (where plain apps go; default: root.default
    when it exists, else the first leaf);
(b) otherwise, when a Docker engine answers, a throw-away cluster from `apache/hadoop:3.3.6`
    started with testcontainers (NameNode, DataNode, ResourceManager, one NodeManager),
    configured with deploy/hadoop/ exactly as docker-compose.yml is, ready once
    /ws/v1/cluster/nodes lists a RUNNING node, removed at the end of the session;
(c) otherwise every test using the fixture is skipped, naming the variables and saying that no
    Docker engine was found.

Integration tests only run when selected: with `-m integration` (any marker expression naming
it) or when HARVESTER_TEST_RM_URL is set. Otherwise they are skipped with that reason, so
`make test` never starts containers.
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

# A sibling module (pytest puts this folder on sys.path for its conftest).
from hadoop_cli import HADOOP_BIN_VAR, HADOOP_HOME_VAR, hadoop_home_or_skip
from hadoop_containers import ClusterStartError, HadoopCluster, docker_engine_problem

RM_URL_VAR = "HARVESTER_TEST_RM_URL"
CONF_DIR_VAR = "HARVESTER_TEST_HADOOP_CONF_DIR"
USER_VAR = "HARVESTER_TEST_USER"

REPO_ROOT = Path(__file__).resolve().parents[2]
HADOOP_CONF = REPO_ROOT / "deploy" / "hadoop"
# The Hadoop image's own user: the daemons run as it, so it owns what the tests submit.
CONTAINER_USER = "hadoop"


@dataclass(frozen=True)
class LiveHadoop:
    """A reachable Hadoop 3.3.6 cluster.

    rm_url: ResourceManager REST base, no trailing slash (append /ws/v1/cluster/...).
    hadoop_home: a Hadoop install whose bin/ CLIs and share/hadoop jars match the cluster, or
        None (then tests needing CLIs or jars use `requires_hadoop_home` and skip).
    conf_dir: client configuration for those CLIs (HADOOP_CONF_DIR), or None.
    user: the user to act as (`?user.name=` on REST writes, HADOOP_USER_NAME for CLIs).
    """

    rm_url: str
    hadoop_home: Path | None
    conf_dir: Path | None
    user: str


# --- selection ---------------------------------------------------------------------------

def _integration_selected(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", default="") or ""
    named = re.search(r"\bintegration\b", markexpr) is not None
    negated = re.search(r"\bnot\s+integration\b", markexpr) is not None
    return (named and not negated) or bool(os.environ.get(RM_URL_VAR))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `integration` tests unless selected (this hook sees every collected item)."""
    if _integration_selected(config):
        return
    skip = pytest.mark.skip(
        reason=f"integration test not selected: run `pytest -m integration` (with {RM_URL_VAR} "
        "or a Docker engine) to run it"
    )
    for item in items:
        if item.get_closest_marker("integration") is not None:
            item.add_marker(skip)


# --- resolution ---------------------------------------------------------------------------

def _optional_dir(var: str) -> Path | None:
    raw = os.environ.get(var)
    if not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_dir():
        pytest.fail(f"{var}={raw} is not a directory")
    return path


def _from_environment(url: str) -> LiveHadoop:
    """(a): a running RM named by the environment; fails (not skips) if it does not answer."""
    rm_url = url.rstrip("/")
    if not re.match(r"^https?://[^/]+", rm_url):
        pytest.fail(f"{RM_URL_VAR}={url!r} is not an http(s) URL such as http://127.0.0.1:8088")
    try:
        resp = requests.get(f"{rm_url}/ws/v1/cluster/info", headers={"Accept": "application/json"}, timeout=10)
        resp.raise_for_status()
        resp.json()["clusterInfo"]
    except (requests.RequestException, ValueError, KeyError) as exc:
        pytest.fail(f"{RM_URL_VAR}={url} is set but GET /ws/v1/cluster/info failed: {exc}")
    return LiveHadoop(
        rm_url=rm_url,
        hadoop_home=_optional_dir(HADOOP_HOME_VAR),
        conf_dir=_optional_dir(CONF_DIR_VAR),
        user=os.environ.get(USER_VAR) or getpass.getuser(),
    )


@pytest.fixture(scope="session")
def live_hadoop() -> Iterator[LiveHadoop]:
    """The cluster under test; see the module docstring for where it comes from."""
    url = os.environ.get(RM_URL_VAR)
    if url:
        yield _from_environment(url)
        return
    problem = docker_engine_problem()
    if problem is not None:
        pytest.skip(
            f"no live Hadoop: set {RM_URL_VAR} to a running ResourceManager's REST base "
            f"(optionally {HADOOP_HOME_VAR}, {HADOOP_BIN_VAR}, {CONF_DIR_VAR}, {USER_VAR}); "
            f"no Docker engine was found for a testcontainers cluster ({problem})"
        )
    cluster = HadoopCluster(HADOOP_CONF)
    try:
        rm_url = cluster.start()
    except ClusterStartError as exc:
        cluster.stop()
        pytest.fail(f"the testcontainers Hadoop 3.3.6 cluster did not start: {exc}")
    try:
        # No Hadoop install on this side: CLI and jar tests skip through requires_hadoop_home.
        yield LiveHadoop(rm_url=rm_url, hadoop_home=None, conf_dir=None, user=CONTAINER_USER)
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def rm_url(live_hadoop: LiveHadoop) -> str:
    """The ResourceManager REST base URL of the live cluster (no trailing slash)."""
    return live_hadoop.rm_url


@pytest.fixture(scope="session")
def requires_hadoop_home() -> Path:
    """A Hadoop install (share/hadoop, and the `hadoop` launcher in its bin/ or in
    HARVESTER_TEST_HADOOP_BIN) for tests that run Hadoop CLIs or use its jars.

    Skips, naming the variable to set, when the install or a launcher is missing; fails when a
    variable names something that is not there (a misconfiguration, not a missing prerequisite).
    """
    return hadoop_home_or_skip("hadoop")


# --- the queues this cluster offers (its layout is not ours) ---------------------------------

@dataclass(frozen=True)
class LiveQueues:
    """plan: the reservable queue's full path (None: none); plan_capacity: its effective capacity
    now; submit: where plain apps go (full path). Found in the RM's /scheduler
    (tests/support/live_cluster.py), or named by HARVESTER_TEST_PLAN_QUEUE / HARVESTER_TEST_QUEUE."""

    plan: str | None
    plan_capacity: object | None
    submit: str | None


@pytest.fixture(scope="session")
def live_queues(live_hadoop: LiveHadoop) -> LiveQueues:
    from live_cluster import env_plan_queue, env_submit_queue, plan_queue, queue_capacity, submit_queue

    from rm_client import RMClient, RMClientConfig

    with RMClient(RMClientConfig(urls=(live_hadoop.rm_url,), user=live_hadoop.user, read_timeout_s=30.0)) as client:
        scheduler = client.get_scheduler()
    plan = plan_queue(scheduler, env_plan_queue())
    return LiveQueues(plan.path if plan else None, queue_capacity(plan) if plan else None,
                      submit_queue(scheduler, env_submit_queue()))


@pytest.fixture(scope="session")
def plan_queue(live_queues: LiveQueues) -> str:
    """The reservable queue (full path); skips, saying which variable names one, when there is none."""
    from live_cluster import PLAN_QUEUE_VAR, env_plan_queue

    if live_queues.plan is None:
        wanted = env_plan_queue()
        pytest.skip(f"{PLAN_QUEUE_VAR}={wanted} is not a reservable queue on this RM" if wanted else
                    f"no reservable queue on this RM (yarn.scheduler.capacity.<queue>.reservable); name one in {PLAN_QUEUE_VAR}")
    return live_queues.plan


@pytest.fixture(scope="session")
def submit_queue(live_queues: LiveQueues) -> str:
    from live_cluster import QUEUE_VAR

    if live_queues.submit is None:
        pytest.skip(f"no leaf queue to submit to on this RM; name one in {QUEUE_VAR}")
    return live_queues.submit
