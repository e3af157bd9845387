"""How a container's end looks to each party: the NM's exit code and diagnostics, the AM's exit
status (scenarios/overcommit-timeout, signal-and-kill; captures nm1-node-containers)."""

from __future__ import annotations

from datetime import datetime, timezone

from harvester.emulator.records import EXIT_ABORTED, EXIT_KILLED_BY_RM, EXIT_PREEMPTED, ContainerRecord
from harvester.sim.cluster import EndCause


def nm_timestamp(t: float) -> str:
    """NM diagnostics time stamps: `2026-11-23 10:37:21.776` (UTC here)."""
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def pid(rec: ContainerRecord) -> int:
    """A stable process id for NM diagnostics (derived from the container number)."""
    return 30000 + int(rec.container_id.rsplit("_", 1)[1]) * 13 % 20000


def set_exit_status(rec: ContainerRecord, cause: EndCause, exit_code: int | None, stamp: str, user: str) -> None:
    """Fill `rec`'s NM exit code/diagnostics and AM exit status for an end by `cause`."""
    if cause is EndCause.RM_OVERCOMMIT:
        rec.nm_exit_code, rec.am_exit_status = EXIT_KILLED_BY_RM, EXIT_PREEMPTED
        rec.nm_diagnostics = (f"[{stamp}]Container Killed by ResourceManager\n[{stamp}]Container killed on "
                              f"request. Exit code is 143\n[{stamp}]Container exited with a non-zero exit code 143. \n")
        rec.am_diagnostics = "Container preempted by scheduler"
    elif cause in (EndCause.SIGNAL_GRACEFUL, EndCause.SIGNAL_FORCEFUL, EndCause.PRIMARY):
        code, sig, cmd = ((143, "SIGTERM", "GRACEFUL_SHUTDOWN") if cause is EndCause.SIGNAL_GRACEFUL
                          else (137, "SIGKILL", "FORCEFUL_SHUTDOWN"))
        rec.nm_exit_code = rec.am_exit_status = code
        rec.nm_diagnostics = (f"[{stamp}]Sent signal {cmd} ({sig}) to pid {pid(rec)} as user {user} for container "
                              f"{rec.container_id}, result=success\n[{stamp}]Container killed on request. Exit code "
                              f"is {code}\n[{stamp}]Container exited with a non-zero exit code {code}. \n"
                              f"[{stamp}]Killed by external signal\n")
        rec.am_diagnostics = rec.nm_diagnostics
    elif cause is EndCause.COMPLETED:
        code = 0 if exit_code is None else exit_code
        rec.nm_exit_code = rec.am_exit_status = code
        if code != 0:
            rec.nm_diagnostics = (f"[{stamp}]Exception from container-launch.\nContainer id: {rec.container_id}\n"
                                  f"Exit code: {code}\n")
    else:  # app killed, node lost
        rec.nm_exit_code = EXIT_KILLED_BY_RM if cause is EndCause.APP_KILLED else EXIT_ABORTED
        rec.am_exit_status = rec.nm_exit_code
        rec.nm_diagnostics = f"[{stamp}]Container Killed by ResourceManager\n"
