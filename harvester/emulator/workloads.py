"""A Python driver to script an emulated cluster: nodes, tenants' CPU over time, YARN apps.

Every call first catches the emulator up to its clock and acts at that instant, so a test
drives it as: `clock.advance(s)` then a call (or an HTTP request). Apps started here behave
like the recorded clients: `distributed_shell` = `yarn jar ...distributedshell.jar
-num_containers N -container_memory M -container_vcores V -shell_command sleep -shell_args S`
(or a busy loop with `cpu_cores`), `mapreduce_sleep` = the MR sleep job (re-runs lost maps).
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from harvester.domain import Resources
from harvester.emulator.records import MR_TASK_STARTUP_S, AmKind, App, AppSpec
from harvester.emulator.state import Emulator

CpuPattern = Callable[[float], "float | np.ndarray"]


class Workload:
    def __init__(self, emu: Emulator) -> None:
        self.emu = emu

    def _now(self) -> float:
        return self.emu.sync()

    # --- nodes ----------------------------------------------------------------------------

    def add_nodes(self, node_ids: Sequence[str], total: Resources, physical_cores: float, **kw: object) -> np.ndarray:
        with self.emu.lock:
            self._now()
            return self.emu.add_nodes(node_ids, total, physical_cores, **kw)  # type: ignore[arg-type]

    def add_cluster(self, n: int, total: Resources = Resources(8192, 8), physical_cores: float = 8.0,
                    prefix: str = "nm", racks: int = 1) -> list[str]:
        """`n` NodeManagers `{prefix}-{i:05d}:45454` on their own hosts, spread over `racks`."""
        ids = [f"{prefix}-{i:05d}:45454" for i in range(n)]
        rack_names = [f"/rack-{i % racks:02d}" if racks > 1 else "/default-rack" for i in range(n)]
        self.add_nodes(ids, total, physical_cores, racks=rack_names)
        return ids

    def update_node(self, node_id: str, memory_mb: int, vcores: int, overcommit_timeout_ms: int = -1) -> None:
        with self.emu.lock:
            self._now()
            self.emu.update_node_resource(self._node(node_id), memory_mb, vcores, overcommit_timeout_ms)

    def _node(self, node_id: str) -> int:
        i = self.emu.node_index(node_id)
        if i is None:
            raise KeyError(f"unknown node {node_id}")
        return i

    def _nodes(self, nodes: str | Iterable[str] | None) -> np.ndarray | slice:
        if nodes is None:
            return slice(None)
        if isinstance(nodes, str):
            return np.array([self._node(nodes)])
        return np.array([self._node(n) for n in nodes])

    # --- primary tenants (outside YARN) ---------------------------------------------------

    def set_primary(self, nodes: str | Iterable[str] | None, cpu_cores: float | np.ndarray,
                    memory_mb: float | np.ndarray | None = None) -> None:
        """Set the primary tenant's CPU (physical cores) and optionally memory on nodes now."""
        with self.emu.lock:
            self._now()
            self.emu.set_primary(self._nodes(nodes), cpu_cores, memory_mb)

    def primary_pattern(self, nodes: str | Iterable[str] | None, fn: CpuPattern) -> None:
        """Primary CPU follows `fn(t)` (epoch s -> cores, scalar or one per node), set every tick."""
        where = self._nodes(nodes)
        with self.emu.lock:
            self.emu.primary_patterns.append(lambda t: self.emu.model.set_primary_usage(fn(t), nodes=where))

    def burn(self, nodes: str | Iterable[str], cores: float, start: float, stop: float) -> None:
        """A busy loop outside YARN from `start` to `stop` (cpu-burn scenario: 2 x `while True: pass`)."""
        where = self._nodes(nodes)

        model = self.emu.model

        def on(_: float) -> None:
            model.set_primary_usage(model.primary_cpu[where] + cores, nodes=where)

        def off(_: float) -> None:
            model.set_primary_usage(np.maximum(model.primary_cpu[where] - cores, 0.0), nodes=where)

        with self.emu.lock:
            self.emu.events.at(start, on)
            self.emu.events.at(stop, off)

    def at(self, t: float, fn: Callable[[float], None]) -> None:
        """Run `fn(t)` at clock time `t` (inside the emulator, in time order)."""
        with self.emu.lock:
            self.emu.events.at(t, fn)

    # --- applications ---------------------------------------------------------------------

    def submit(self, spec: AppSpec, app_id: str | None = None) -> App:
        with self.emu.lock:
            self._now()
            return self.emu.apps_mgr.submit(spec, app_id)

    def distributed_shell(self, workers: int, worker: Resources = Resources(1024, 1), *,
                          duration_s: float | None = None, cpu_cores: float = 0.0, exit_code: int = 0,
                          queue: str = "root.default", user: str = "root", name: str = "DistributedShell",
                          am: Resources = Resources(512, 1), reservation_id: str | None = None,
                          priority: int = 0, am_startup_s: float | None = None) -> App:
        """A DS app: AM (-master_memory 512 MB) + `workers` containers that sleep `duration_s`
        (None = until killed) or burn `cpu_cores` (a busy loop wants 1.0)."""
        return self.submit(AppSpec(name=name, user=user, queue=queue, kind=AmKind.DISTRIBUTED_SHELL, am=am,
                                   workers=workers, worker=worker, worker_duration_s=duration_s,
                                   worker_cpu_cores=cpu_cores, worker_exit_code=exit_code,
                                   reservation_id=reservation_id, priority=priority, am_startup_s=am_startup_s))

    def mapreduce_sleep(self, maps: int, map_resources: Resources = Resources(1024, 1), *,
                        map_duration_s: float | None = 400.0, queue: str = "root.default", user: str = "root",
                        am: Resources = Resources(1024, 1), reservation_id: str | None = None,
                        am_startup_s: float | None = None) -> App:
        """The MR sleep job (`sleep -m N -r 0 -mt MS`, recorded with
        yarn.app.mapreduce.am.resource.mb=1024): AM + N maps; lost maps are re-run."""
        return self.submit(AppSpec(name="Sleep job", user=user, queue=queue, app_type="MAPREDUCE",
                                   kind=AmKind.MAPREDUCE, am=am, workers=maps, worker=map_resources,
                                   worker_duration_s=map_duration_s, worker_cpu_cores=0.05,
                                   worker_mem_used_mb=300.0, worker_startup_s=MR_TASK_STARTUP_S,
                                   reservation_id=reservation_id,
                                   am_startup_s=am_startup_s))

    def kill(self, app_id: str, user: str = "root") -> str:
        with self.emu.lock:
            self._now()
            return self.emu.apps_mgr.kill(self.emu.apps[app_id], user)

    def pin_heartbeat(self, node_id: str, at: float) -> None:
        """Make `node_id`'s NodeManager heartbeat at time `at` (e.g. as read off a recording)."""
        self.emu.pin_heartbeat(node_id, at)

    def pin_plan_follower(self, at: float) -> None:
        """Make the reservation plan follower step at time `at` (e.g. as read off an RM log)."""
        self.emu.pin_plan_follower(at)

    def signal(self, container_id: str, graceful: bool = True) -> None:
        """GRACEFUL_SHUTDOWN / FORCEFUL_SHUTDOWN, delivered at the node's next heartbeat."""
        with self.emu.lock:
            self._now()
            self.emu.signal_container(container_id, graceful)

    def containers(self, app_id: str) -> list[str]:
        """Live container ids of the app's current attempt, allocation order."""
        with self.emu.lock:
            self._now()
            return [r.container_id for r in self.emu.live_containers(self.emu.apps[app_id])]
