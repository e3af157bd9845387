"""`POST /v1/whatif` and `GET /v1/whatif`: a what-if run from the running sidecar (issue 28).

`harvester whatif` replays the sidecar's history store through the simulator; from a running
sidecar it runs in a SEPARATE PROCESS — `sys.executable -m harvester whatif --config <the serving
config> --out var/whatif/<time> --progress-json <out>/progress.json` (`--store <path>` when the
sidecar serves without a settings file) — started at a lower CPU priority (nice +10), its output
in `<out>/whatif.log`. The sidecar's loops never wait for it and share no lock or thread with it:
the simulation's CPU and memory are another process's, reading the SQLite store like any reader
(WAL: the loops keep writing).

- `POST /v1/whatif` (admin token, like every write; docs/security.md): starts a run, answers 202
  with its state; 409 while one runs (at most one at a time: a run takes minutes of CPU on a
  big store); 409 too when there is nothing another process can replay (`store.backend: memory`).
- `GET /v1/whatif`: `state` (`idle`, `running`, `succeeded`, `failed`), the current or last run
  (`out`, `pid`, `started`, `finished`, `exit_code`, `progress` — the child's progress file
  `{"fraction", "stage", "started", "updated"}` as last read — and `log`: the tail of its output
  when it failed), and `last_report`: the newest `whatif.json` under the output folder (also
  from before a restart), with where its Markdown (`whatif.md`) is.

The child is reaped by a waiter thread (no zombie); `stop()` (the sidecar stopping) terminates a
run still going, so no simulation outlives its sidecar.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harvester.advice.admin_http import Request, Response

log = logging.getLogger(__name__)

PATH = "/v1/whatif"
#: The report is read back for GET only up to this size (a 1,000-node month is ~100 KB).
MAX_REPORT_BYTES = 8 * 1024 * 1024
LOG_TAIL_BYTES = 4096
NICE = 10

Command = Callable[[Path, Path], list[str]]


def whatif_command(config: Path | None, store: Path | None) -> Command:
    """The argv of a run writing into `out` with progress in `progress`: the serving config when
    there is a file, else the store (the embedded default's settings otherwise)."""
    source = ["--config", str(config)] if config is not None else ["--store", str(store)] if store is not None else []

    def argv(out: Path, progress: Path) -> list[str]:
        return [sys.executable, "-m", "harvester", "whatif", *source, "--out", str(out), "--progress-json", str(progress)]

    return argv


def _lower_priority(pid: int) -> None:
    """nice +10 from the parent (a `preexec_fn` is unsafe in a threaded process)."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, pid) + NICE))
    except (OSError, AttributeError):  # not permitted, or not POSIX: it runs at the sidecar's priority
        pass


def _read_json(path: Path, limit: int = MAX_REPORT_BYTES) -> Any:
    """A JSON file's document, or None when absent, too large, or not (yet) whole JSON."""
    try:
        if path.stat().st_size > limit:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _tail(path: Path, n: int = LOG_TAIL_BYTES) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


@dataclass
class Run:
    out: Path
    started: float
    pid: int | None = None
    finished: float | None = None
    exit_code: int | None = None
    progress: dict[str, Any] | None = None
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def progress_path(self) -> Path:
        return self.out / "progress.json"

    @property
    def log_path(self) -> Path:
        return self.out / "whatif.log"

    @property
    def state(self) -> str:
        if self.exit_code is None:
            return "running"
        return "succeeded" if self.exit_code == 0 else "failed"


class WhatifRuns:
    """At most one `harvester whatif` child at a time (module docstring).

    `command(out, progress)` gives the argv (tests inject a fake one); `out_root` is where each
    run gets its folder, named by `now()` (the sidecar's clock) in UTC; `unavailable` is why no
    run can start (None: runs can start).
    """

    def __init__(self, command: Command, out_root: Path, now: Callable[[], float], *,
                 unavailable: str | None = None) -> None:
        self.command = command
        self.out_root = out_root
        self.now = now
        self.unavailable = unavailable
        self._lock = threading.Lock()
        self._run: Run | None = None
        self._stopped = False

    # --- HTTP -----------------------------------------------------------------------------

    def handle(self, req: Request) -> Response:
        if req.method == "POST":
            return self.post()
        return Response.json(200, self.document())

    def post(self) -> Response:
        with self._lock:
            if self._stopped:
                return Response.json(503, {"error": "the sidecar is stopping"})
            if self.unavailable is not None:
                return Response.json(409, {"error": self.unavailable})
            if self._run is not None and self._run.exit_code is None:
                return Response.json(409, {"error": "a what-if run is in progress (at most one at a time); "
                                                    "GET /v1/whatif shows its progress", **self._run_doc(self._run)})
            try:
                run = self._start()
            except OSError as exc:
                log.warning("what-if run could not start", extra={"error": str(exc)})
                return Response.json(500, {"error": f"cannot start the what-if run: {exc}"})
            self._run = run
            return Response.json(202, {"state": "running", "run": self._run_doc(run)})

    def document(self) -> dict[str, Any]:
        with self._lock:
            run = self._run
            if run is not None:
                self._refresh(run)
            doc: dict[str, Any] = {"state": "idle" if run is None else run.state,
                                   "run": None if run is None else self._run_doc(run)}
            if self.unavailable is not None:
                doc["unavailable"] = self.unavailable
        doc["last_report"] = self.last_report()
        return doc

    # --- runs -----------------------------------------------------------------------------

    def _out_dir(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.now()))
        out = self.out_root / stamp
        k = 1
        while out.exists():
            k += 1
            out = self.out_root / f"{stamp}-{k}"
        return out

    def _start(self) -> Run:
        out = self._out_dir()
        out.mkdir(parents=True)
        run = Run(out.resolve(), self.now())
        argv = self.command(run.out, run.progress_path)
        with run.log_path.open("wb") as logf:
            run.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                        close_fds=True, start_new_session=True)
        run.pid = run.proc.pid
        _lower_priority(run.pid)
        log.info("what-if run started", extra={"pid": run.pid, "out": str(run.out)})
        threading.Thread(target=self._reap, args=(run,), name="whatif-reaper", daemon=True).start()
        return run

    def _reap(self, run: Run) -> None:
        assert run.proc is not None
        code = run.proc.wait()
        with self._lock:
            run.exit_code = code
            run.finished = self.now()
            self._refresh(run)
        log.info("what-if run ended", extra={"pid": run.pid, "exit_code": code, "out": str(run.out)})

    def _refresh(self, run: Run) -> None:
        doc = _read_json(run.progress_path, 64 * 1024)
        if isinstance(doc, dict):  # a file half-written keeps the last whole one
            run.progress = doc

    def _run_doc(self, run: Run) -> dict[str, Any]:
        doc: dict[str, Any] = {"state": run.state, "out": str(run.out), "pid": run.pid, "started": run.started,
                               "finished": run.finished, "exit_code": run.exit_code, "progress": run.progress}
        if run.state == "failed":
            doc["log"] = _tail(run.log_path)
        return doc

    def last_report(self) -> dict[str, Any] | None:
        """The newest finished report under `out_root` (by its folder's name: the start time)."""
        try:
            dirs = sorted((p for p in self.out_root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True)
        except OSError:
            return None
        for d in dirs:
            path = d / "whatif.json"
            if path.is_file():
                md = d / "whatif.md"
                return {"json": str(path.resolve()), "markdown": str(md.resolve()) if md.is_file() else None,
                        "report": _read_json(path)}
        return None

    def stop(self, timeout_s: float = 1.0) -> None:
        """Terminate a run still going (the sidecar stops); no new run starts after this."""
        with self._lock:
            self._stopped = True
            run = self._run
        if run is None or run.proc is None or run.proc.poll() is not None:
            return
        try:
            os.killpg(run.proc.pid, 15)
            run.proc.wait(timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(run.proc.pid, 9)
            except OSError:
                pass
