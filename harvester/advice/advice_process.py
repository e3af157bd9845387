"""The gRPC advice served from a process that runs no loop (`server.grpc_advice_process`, issue 29).

Why: the loops are Python. At 50,000 nodes the guard computes for ~0.7 s of every 5-s period,
and a gRPC call answered in the same process waits for the interpreter lock at each of its
hand-overs (poller thread → handler thread → reply): on the 2-core development machine
SelectClasses's p99 went from ~0.75 ms to 0.80–1.10 ms while the guard ticked, and to 6.3 ms
with another job busy on the other core (bench/harvesting.py --only guard,select). A second
process has its own interpreter, so its calls wait for nobody.

How: the main process keeps its gRPC server, bound to a private Unix socket (a 0700
directory), and starts the advice process (advice/advice_child.py, `spawn`: no fork of a
threaded process) on the public `server.grpc_listen` with the same TLS. The advice process
answers SelectClasses and ListTenantClasses from a mirror of the board's harvesting item —
the fields those two read, sent by a thread here after each publication, only the fields
that changed (the class state each guard period; the model and job history when they
change) — and forwards every other call to the main process byte for byte
(advice/grpc_forward.py). Its timings come back every 0.5 s into this process's `Metrics`
(/metrics is served here). If it dies it is started again on the same port (the mirror is
sent whole); if this process dies, its pipe closes and the advice process exits.

Separate processes are not enough on a small machine: Linux places a waking thread on a core
that is busy with the loops (bench, another job running: an empty call's p99 2.2–2.7 ms
unpinned, 0.55 ms pinned). `server.grpc_advice_cpus` pins the advice process to its own
CPUs and the main process to the others (`split_cpus`, `pin_this_process`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any, Callable

from harvester.advice.advice_child import MIRRORED_FIELDS, AdviceSpec, serve
from harvester.advice.grpc_server import GrpcServer, ServiceImpl
from harvester.board.harvesting import HARVESTING, HarvestingBoard
from harvester.config_server import TlsSettings
from harvester.decisions.strategy import SelectionStrategy
from harvester.observability.metrics import Metrics

log = logging.getLogger(__name__)

#: How long the advice process may take to import and bind before start() gives up (seconds).
START_TIMEOUT_S = 60.0
#: Wait before starting a dead advice process again (seconds).
RESTART_DELAY_S = 1.0


def split_cpus(advice: frozenset[int] | set[int] | list[int], available: set[int] | None = None) -> tuple[frozenset[int], frozenset[int]]:
    """(the advice process's CPUs, the main process's): ValueError when they are not CPUs this
    process may run on, or leave none for the main process."""
    have = frozenset(os.sched_getaffinity(0) if available is None else available)
    wanted = frozenset(advice)
    if not wanted <= have:
        raise ValueError(f"server.grpc_advice_cpus {sorted(wanted)}: this process may run on CPUs {sorted(have)} only")
    rest = have - wanted
    if not rest:
        raise ValueError(f"server.grpc_advice_cpus {sorted(wanted)} takes every CPU ({sorted(have)}): leave one for the loops")
    return wanted, rest


def pin_this_process(cpus: frozenset[int]) -> None:
    """Every thread of this process on `cpus` (Linux sets affinity per thread; new threads
    inherit their creator's)."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except (ProcessLookupError, PermissionError):
            pass  # a thread that just ended


class AdviceProcess:
    """The gRPC face of the sidecar in two processes (module docstring); used like `GrpcServer`."""

    def __init__(self, listen: str, metrics: Metrics, implementations: list[ServiceImpl], board: HarvestingBoard, *,
                 selection: SelectionStrategy, tls: TlsSettings, max_workers: int = 8,
                 max_message_bytes: int = 4 * 1024 * 1024,
                 unimplemented_reason: Callable[[str], str] = lambda name: "not implemented in this release",
                 log_level: str = "INFO", log_format: str = "text", cpus: frozenset[int] = frozenset()) -> None:
        self._main_cpus = split_cpus(cpus)[1] if cpus else None  # ValueError before anything starts
        self._unpinned: frozenset[int] | None = None
        self._dir = tempfile.mkdtemp(prefix="harvester-grpc-")  # 0700: only this user reaches the socket
        self.internal = GrpcServer(f"unix:{self._dir}/main.sock", metrics, implementations, max_workers=max_workers,
                                   unimplemented_reason=unimplemented_reason, max_message_bytes=max_message_bytes)
        self.services = self.internal.services
        self.tls = tls.cert_file is not None
        plain = replace(selection, weights={t: dict(w) for t, w in selection.weights.items()})  # picklable
        self._spec = AdviceSpec(listen, self.internal.address, tls, max_workers, max_message_bytes, dict(self.services),
                                plain, log_level, log_format, frozenset(cpus))
        self._board, self._metrics = board, metrics
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()            # the pipe's sending end and the process handle
        self._conn: Connection | None = None
        self._process: Any = None
        self._sent: dict[str, Any] = {}          # the mirror the advice process holds (by identity)
        self._changed = threading.Event()
        self._synced, self._synced_token = threading.Event(), 0
        self._stopping = threading.Event()
        self.address = listen
        self.restarts = 0

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the main process's server, then the advice process; OSError when it cannot serve."""
        self.internal.start()
        self._spawn()
        if self._main_cpus is not None:
            self._unpinned = frozenset(os.sched_getaffinity(0))  # given back by stop()
            pin_this_process(self._main_cpus)
        self._board.board.watch(HARVESTING, self._changed.set)
        self._changed.set()
        for name, body in (("advice-mirror", self._mirror), ("advice-receive", self._receive)):
            threading.Thread(target=body, name=name, daemon=True).start()

    def _spawn(self) -> None:
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(target=serve, args=(child, self._spec), name="harvester-advice", daemon=True)
        process.start()
        child.close()
        if not parent.poll(START_TIMEOUT_S):
            process.kill()
            raise OSError(f"the gRPC advice process did not start within {START_TIMEOUT_S:.0f} s")
        try:
            kind, detail = parent.recv()
        except EOFError:
            process.join(5)
            raise OSError(f"the gRPC advice process exited while starting (exit code {process.exitcode})") from None
        if kind != "ready":
            process.join(5)
            raise OSError(f"cannot serve gRPC on {self._spec.listen} from the advice process: {detail}")
        with self._lock:
            self._conn, self._process, self._sent = parent, process, {}
        if self._spec.listen.rpartition(":")[2] == "0":  # a restart binds the port the first one got
            self._spec = replace(self._spec, listen=detail)
        self.address = detail
        self._changed.set()  # a new process holds no mirror: send it whole

    def stop(self, grace_s: float) -> None:
        """Both servers drain together (calls forwarded in flight finish): grace_s + 0.5 s in all."""
        deadline = time.monotonic() + grace_s + 0.5
        self._stopping.set()
        self._changed.set()
        with self._lock:
            conn, process = self._conn, self._process
            try:
                if conn is not None:
                    conn.send(("stop", grace_s))
            except OSError:
                pass
        self.internal.stop(grace_s)
        if process is not None:
            process.join(max(0.1, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1.0)
        shutil.rmtree(self._dir, ignore_errors=True)
        if self._unpinned is not None:
            pin_this_process(self._unpinned)

    def status(self) -> dict[str, Any]:
        """For /status: the advice process's pid, whether it runs, its restarts and CPUs."""
        with self._lock:
            pid = None if self._process is None else self._process.pid
        return {"pid": pid, "alive": self.alive, "restarts": self.restarts, "cpus": sorted(self._spec.cpus),
                "main_cpus": sorted(self._main_cpus) if self._main_cpus is not None else None,
                "internal": self.internal.address}

    @property
    def alive(self) -> bool:
        with self._lock:
            return self._process is not None and self._process.is_alive()

    def sync(self, timeout_s: float = 10.0) -> bool:
        """Send the board's current state and wait until the advice process has applied it (tests,
        the bench); False on timeout or when it is not running."""
        with self._lock:
            self._synced_token += 1  # a late answer to an earlier sync never counts for this one
            token, done = self._synced_token, self._synced
            done.clear()
            if not self._send_changes():
                return False
            try:
                self._conn.send(("sync", token))  # type: ignore[union-attr]
            except OSError:
                return False
        return done.wait(timeout_s)

    # -- the mirror and the metrics ----------------------------------------------------------
    def _mirror(self) -> None:
        while not self._stopping.is_set():
            self._changed.wait()
            self._changed.clear()
            if self._stopping.is_set():
                return
            with self._lock:
                self._send_changes()

    def _send_changes(self) -> bool:
        """The mirrored fields that changed since the last send, sent (under `_lock`); False when
        the advice process is not there to take them."""
        view = self._board.view()
        changed = {f: getattr(view, f) for f in MIRRORED_FIELDS if self._sent.get(f, self) is not getattr(view, f)}
        if self._conn is None:
            return False
        if changed:
            try:
                self._conn.send(("harvesting", changed))
            except OSError:
                return False  # the advice process is gone: _receive starts another, which gets it whole
            self._sent.update(changed)
        return True

    def _receive(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                conn = self._conn
            try:
                kind, payload = conn.recv()  # type: ignore[union-attr]
            except (EOFError, OSError):
                if self._stopping.is_set():
                    return
                self._restart()
                continue
            if kind == "synced":
                if payload == self._synced_token:
                    self._synced.set()
            elif kind == "metrics":
                for what, name, code, seconds in payload:
                    if what == "grpc":
                        self._metrics.record_grpc(name, code, seconds)
                    else:
                        self._metrics.record_decision(name, seconds)

    def _restart(self) -> None:
        with self._lock:
            process = self._process
        if process is not None:
            process.join(1.0)
        log.error("the gRPC advice process exited (code %s); starting it again on %s",
                  getattr(process, "exitcode", None), self._spec.listen)
        while not self._stopping.is_set():
            time.sleep(RESTART_DELAY_S)
            try:
                self._spawn()
                self.restarts += 1
                return
            except OSError as exc:
                log.error("the gRPC advice process cannot start again: %s (next try in %.0f s)", exc, RESTART_DELAY_S)
