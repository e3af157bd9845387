"""The Hadoop Resource Estimator 3.3.6 REST API (`ResourceEstimatorService`, port 9998) over
Harvester's history store: an existing Estimator client points at it unchanged. The contract
is the recordings of a real 3.3.6 (tests/data/shared/fixtures/resourceestimator-3.3.6), replayed
by tests/contract/test_estimator_captures.py; docs/morpheus.md "A drop-in Resource Estimator".

    POST   /resourceestimator/translator/{logFile}                   204: the log's runs added
    GET    /resourceestimator/skylinestore/history/{pipeline}/{run}  [[RecurrenceId, [skyline]]...]
    DELETE /resourceestimator/skylinestore/history/{pipeline}/{run}  204: one run removed
    GET    /resourceestimator/skylinestore/estimation/{pipeline}     the stored estimate, or null
    DELETE /resourceestimator/skylinestore/estimation/{pipeline}     204 (ours: solve again next time)
    GET    /resourceestimator/estimator/{pipeline}                   the stored estimate, else solve and store

As the Estimator: `*` as pipeline is every run, `*` as run every run of the pipeline; an empty
history is `{}`, an unknown one `null`; answers list runs in its HashMap order; an estimate is
stored and answered again without solving, even after the history changed; a run already in
the history is refused (500 DuplicateRecurrenceIdException); fewer runs than `min_job_runs`
cannot be estimated (500 InvalidInputException); errors are Hadoop's GenericExceptionHandler
body `{"exception", "message", "javaClassName"}` (no RemoteException wrapper) with its status.

Where it differs, on purpose: a file with a duplicate run adds nothing (the Estimator adds the
runs before the duplicate in its HashMap order); the translator reads only inside `data_dir`
(403 otherwise: no arbitrary file is read); the LP is HiGHS with results rounded UP (the
Estimator truncates ojAlgo's); a run is discretized from its first allocation (the Estimator
samples seconds 0.. of a run that starts later and cuts its end); `/estimator/*` is refused.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path
from typing import Callable

from harvester.advice.admin_http import Request, Response
from harvester.config_estimator import EstimatorSettings
from harvester.domain import Resources
from harvester.history.store import HistoryStore
from harvester.models.estimator_history import (
    DuplicateRun,
    LogLineError,
    RecurrenceId,
    TooLong,
    allocation_document,
    containers_per_step,
    estimate_allocation,
    filtered_order,
    gson,
    history_document,
    log_lines,
    parse_native_log,
    store_order,
)
from harvester.models.skyline import SkylineFitError, round_up, solve_skyline_lp
from harvester.models.skyline_formats import Rle

PREFIX = "/resourceestimator/"
_STORE_EXC = "org.apache.hadoop.resourceestimator.skylinestore.exceptions."
_SOLVER_EXC = "org.apache.hadoop.resourceestimator.solver.exceptions."
_NO_CONTENT = Response(204, b"", content_type="")


class EstimatorError(Exception):
    """An answer in GenericExceptionHandler's form: status and the Java exception's class."""

    def __init__(self, status: int, java_class: str, message: str) -> None:
        super().__init__(message)
        self.status, self.java_class, self.message = status, java_class, message

    def response(self) -> Response:
        doc = {"exception": self.java_class.rsplit(".", 1)[-1], "message": self.message, "javaClassName": self.java_class}
        return Response(self.status, gson(doc))


def _json(body: bytes) -> Response:
    return Response(200, body)


def invalid_input(reason: str) -> EstimatorError:
    """The solver's InvalidInputException("Job ResourceSkyline history", reason)."""
    entity = "Job ResourceSkyline history"
    return EstimatorError(500, _SOLVER_EXC + "InvalidInputException",
                          f"{entity} is {reason}, please try again with valid {entity}")


class EstimatorService:
    """The routes of the module docstring; `handle(request)` answers any path under PREFIX.
    Handlers block (file reads, SQLite, the LP): the admin server runs them in its threads."""

    def __init__(self, settings: EstimatorSettings, store: HistoryStore, now: Callable[[], float]) -> None:
        self.settings = settings
        self._store = store
        self._now = now
        self._solving = threading.Lock()  # one LP at a time; a second caller then reads the stored one

    # --- routing -------------------------------------------------------------------------

    def handle(self, req: Request) -> Response:
        try:
            return self._route(req.method, req.path[len(PREFIX):] if req.path.startswith(PREFIX) else None)
        except EstimatorError as exc:
            return exc.response()

    def _route(self, method: str, rest: str | None) -> Response:
        if rest is not None and rest.startswith("translator/") and len(rest) > len("translator/"):
            return self._only(method, "POST") or self.translate(rest[len("translator/"):])
        parts = (rest or "").split("/")
        if any(not p for p in parts):
            parts = []
        if parts[:2] == ["skylinestore", "history"] and len(parts) == 4:
            rid = RecurrenceId(parts[2], parts[3])
            return self._only(method, "GET", "DELETE") or (self.history(rid) if method == "GET" else self.delete_history(rid))
        if parts[:2] == ["skylinestore", "estimation"] and len(parts) == 3:
            return self._only(method, "GET", "DELETE") or (self.estimation(parts[2]) if method == "GET"
                                                            else self.delete_estimation(parts[2]))
        if parts[:1] == ["estimator"] and len(parts) == 2:
            return self._only(method, "GET") or self.estimate(parts[1])
        raise EstimatorError(404, "javax.ws.rs.NotFoundException", f"no Resource Estimator resource at {PREFIX}{rest or ''}")

    @staticmethod
    def _only(method: str, *allowed: str) -> Response | None:
        if method in allowed:
            return None
        return Response(405, gson({"exception": "NotAllowedException", "message": f"{method} not allowed; use "
                                   f"{', '.join(allowed)}", "javaClassName": "javax.ws.rs.NotAllowedException"}),
                        headers={"Allow": ", ".join(allowed)})

    # --- translator ----------------------------------------------------------------------

    def translate(self, log_file: str) -> Response:
        """POST translator/{logFile}: every run of the file, or none (module docstring)."""
        s = self.settings
        text = read_log(s.data_dir, log_file, int(s.max_file_mb * 1024 * 1024))
        try:
            runs = parse_native_log(log_lines(text), s.time_interval)
        except LogLineError as exc:
            if exc.kind == "fields":  # the parser indexes fields 5 and 7 of the split line
                raise EstimatorError(500, "java.lang.ArrayIndexOutOfBoundsException", f"{log_file}: {exc}") from None
            raise EstimatorError(400, "java.lang.NumberFormatException", f"{log_file}: {exc}") from None
        try:
            self._store.add_estimator_history(runs)
        except DuplicateRun as exc:
            raise EstimatorError(500, _STORE_EXC + "DuplicateRecurrenceIdException", str(exc)) from None
        return _NO_CONTENT

    # --- skyline store -------------------------------------------------------------------

    def history(self, rid: RecurrenceId) -> Response:
        """GET skylinestore/history/{p}/{r}: `*` pipeline = all; `*` run = the pipeline's runs."""
        if rid.pipeline_id == "*":
            h = self._store.estimator_history()
            return _json(gson(history_document(store_order(h.runs, h.largest))))
        if rid.run_id == "*":
            h = self._store.estimator_history(rid.pipeline_id)
            return _json(gson(history_document(filtered_order(h.runs, h.largest) if h.runs else None)))
        h = self._store.estimator_history(rid.pipeline_id, rid.run_id)
        return _json(gson(history_document(h.runs or None)))

    def delete_history(self, rid: RecurrenceId) -> Response:
        if not self._store.delete_estimator_history(rid):
            raise EstimatorError(500, _STORE_EXC + "RecurrenceIdNotFoundException",
                                 f"Trying to deleteHistory non-existing recurring pipeline  {rid}'s resource skylines")
        return _NO_CONTENT

    def estimation(self, pipeline_id: str) -> Response:
        got = self._store.estimator_estimate(pipeline_id)
        return _json(b"null" if got is None else gson(allocation_document(*got)))

    def delete_estimation(self, pipeline_id: str) -> Response:
        self._store.delete_estimator_estimate(pipeline_id)
        return _NO_CONTENT

    # --- estimator -----------------------------------------------------------------------

    def estimate(self, pipeline_id: str) -> Response:
        """GET estimator/{p}: the stored estimate, else the LP over the pipeline's runs (stored)."""
        if pipeline_id == "*":
            raise EstimatorError(400, "org.apache.hadoop.yarn.webapp.BadRequestException",
                                 "'*' is not a pipeline: estimate one pipeline at a time")
        got = self._store.estimator_estimate(pipeline_id)
        if got is None:
            with self._solving:
                got = self._store.estimator_estimate(pipeline_id) or self._solve(pipeline_id)
        return _json(gson(allocation_document(*got)))

    def _solve(self, pipeline_id: str) -> tuple[Rle, Resources]:
        s = self.settings
        h = self._store.estimator_history(pipeline_id)
        if not h.runs:
            raise invalid_input("invalid")
        history = filtered_order(h.runs, h.largest)
        if len(history) < s.min_job_runs:
            raise invalid_input(f"containing less job runs than {s.min_job_runs}")
        try:
            usage, container = containers_per_step(history, s.time_interval, s.max_steps)
            fit = solve_skyline_lp(usage, s.alpha, beta=s.beta, time_limit_s=s.time_limit_s)
        except (TooLong, SkylineFitError) as exc:
            raise EstimatorError(500, _SOLVER_EXC + "SolverException", f"pipeline {pipeline_id}: {exc}") from None
        allocation = estimate_allocation(round_up(fit.fitted, 1), s.time_interval)
        self._store.save_estimator_estimate(pipeline_id, allocation, container, self._now())
        return allocation, container


def read_log(data_dir: Path | None, given: str, max_bytes: int) -> str:
    """The text of the log file `given` (relative to `data_dir`, or absolute), only if it lies
    inside `data_dir` once every symlink is resolved; checked before the file is touched, and
    again on the opened descriptor (a path swapped in between is refused). The Estimator's
    messages for a missing or unreadable file."""
    forbidden = "org.apache.hadoop.yarn.webapp.ForbiddenException"
    if data_dir is None:
        raise EstimatorError(403, forbidden, "the translator reads no files here: set estimator.data_dir "
                                             "(harvester estimator serve --data-dir)")
    if "\0" in given:
        raise EstimatorError(400, "java.lang.IllegalArgumentException", "a file path cannot hold a NUL byte")
    root = os.path.realpath(data_dir)
    path = os.path.realpath(given if given.startswith("/") else os.path.join(root, given))
    outside = EstimatorError(403, forbidden, f"{given} is outside the translator's data directory "
                                             "(estimator.data_dir); put the log there")
    if not _inside(path, root):
        raise outside
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise outside from None
        raise EstimatorError(404, "java.io.FileNotFoundException", f"{given} ({os.strerror(exc.errno or 0)})") from None
    try:
        opened = f"/proc/self/fd/{fd}"  # Linux: where the descriptor really points
        if os.path.exists(opened) and not _inside(os.path.realpath(opened), root):
            raise outside
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise EstimatorError(404, "java.io.FileNotFoundException", f"{given} (Is a directory)")
        if not stat.S_ISREG(st.st_mode):
            raise EstimatorError(403, forbidden, f"{given} is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise EstimatorError(400, "org.apache.hadoop.yarn.webapp.BadRequestException",
                             f"{given} is larger than {max_bytes / 1048576:g} MB (estimator.max_file_mb)")
    return data.decode("utf-8", "replace")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
