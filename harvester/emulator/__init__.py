"""The built-in YARN ResourceManager emulator: Hadoop 3.3.6's REST API over the shared cluster model.

Build one, script it, serve it:

    clock = SimClock(start=1795430150.306)            # or ScaledClock(speed=60) / RealClock()
    emu = Emulator(clock, EmulatorConfig(cluster_ts_ms=1795430060362))
    w = Workload(emu)
    w.add_nodes(["localhost:45454", "localhost:45455"], Resources(8192, 8), physical_cores=2)
    app = w.distributed_shell(workers=4, worker=Resources(1024, 1), duration_s=300)
    with EmulatorServer(emu) as server:                # port 0: a free loopback port
        requests.get(server.url + "/ws/v1/cluster/nodes")
        clock.advance(10)                              # the next request catches up

Answers are written from rm_client.wire's field tables and match the recorded captures
(fixtures/yarn-3.3.6); the dynamics follow the mechanisms the scenarios show: state.py (model
and time), dynamics.py (heartbeat, monitor and plan-follower clocks), scheduler.py and
capacity.py (CapacityScheduler rules), plan.py (reservations), applications.py (AMs),
contention.py (host CPU sharing). docs/emulator.md says what it reproduces and what not;
`harvester emulator serve` runs it alone.
"""

from __future__ import annotations

from harvester.emulator.dynamics import Timing
from harvester.emulator.queues import QueueConfig
from harvester.emulator.records import AmKind, AppSpec
from harvester.emulator.server import EmulatorServer, start_emulator
from harvester.emulator.state import Emulator, EmulatorConfig
from harvester.emulator.workloads import Workload

__all__ = [
    "AmKind",
    "AppSpec",
    "Emulator",
    "EmulatorConfig",
    "EmulatorServer",
    "QueueConfig",
    "Timing",
    "Workload",
    "start_emulator",
]
