"""The emulated RM over real HTTP on loopback (port 0 picks a free port).

Each request: catch the emulator up to its clock, route under the emulator's lock, send the
RM's headers (`Content-Type: application/json;charset=utf-8`, no-cache, nosniff ...). An
optional background ticker catches up every `tick_s` of clock time so dynamics advance with
no one polling — with a `ScaledClock` that is faster than real time. With a `SimClock` there
is no ticker (its `wait` does not block): tests step the clock and the next request catches up.
"""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harvester.clock import SimClock
from harvester.emulator import errors
from harvester.emulator.messages import Reply, Request
from harvester.emulator.routes import Router
from harvester.emulator.state import Emulator

log = logging.getLogger(__name__)

RM_HEADERS = {
    "Cache-Control": "no-cache",
    "Pragma": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "X-XSS-Protection": "1; mode=block",
    "X-Frame-Options": "SAMEORIGIN",
}


class EmulatorServer:
    """Serves one `Emulator`; `start()` / `stop()`; `url` is the REST base (no trailing slash)."""

    def __init__(self, emu: Emulator, host: str = "127.0.0.1", port: int = 0, *,
                 ticker: bool | None = None, tick_s: float = 1.0) -> None:
        self.emu = emu
        self.router = Router(emu)
        router = self.router

        class Handler(BaseHTTPRequestHandler):
            server_version = "Jetty(9.4.51.v20230217)"
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug(fmt, *args)

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(self.command, parts.path, parse_qs(parts.query, keep_blank_values=True),
                              dict(self.headers.items()), body)
                try:
                    with emu.lock:
                        emu.sync()
                        reply = router.handle(req)
                except errors.RestError as err:
                    reply = Reply(err.status, err.body, err.content_type)
                except Exception as exc:  # a bug answers 500 like a Java exception; the server lives on
                    log.exception("emulator route failed", extra={"path": req.path})
                    err = errors.remote(500, f"java.lang.{type(exc).__name__}", str(exc))
                    reply = Reply(err.status, err.body, err.content_type)
                data = reply.body.encode("utf-8")
                self.send_response(reply.status)
                for k, v in RM_HEADERS.items():
                    self.send_header(k, v)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _serve

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self.url = f"http://{host}:{self.port}"
        self._ticker = (not isinstance(emu.clock, SimClock)) if ticker is None else ticker
        self._tick_s = tick_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> EmulatorServer:
        t = threading.Thread(target=self._httpd.serve_forever, name="yarn-emulator-http", daemon=True)
        t.start()
        self._threads.append(t)
        if self._ticker:
            tk = threading.Thread(target=self._tick_loop, name="yarn-emulator-ticker", daemon=True)
            tk.start()
            self._threads.append(tk)
        log.info("yarn emulator serving", extra={"url": self.url, "nodes": len(self.emu.model)})
        return self

    def _tick_loop(self) -> None:
        while not self.emu.clock.wait(self._stop, self._tick_s):
            try:
                self.emu.sync()
            except Exception:  # keep ticking; the failure is logged with its traceback
                log.exception("emulator tick failed")

    def stop(self) -> None:
        """Stop serving and release the port; safe before `start()` and when called twice."""
        self._stop.set()
        if self._threads:  # shutdown() waits for serve_forever, so only call it once it ran
            self._httpd.shutdown()
        self._httpd.server_close()
        for t in self._threads:
            t.join(timeout=2.0)

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_emulator(emu: Emulator, host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> EmulatorServer:
    """Start serving `emu` in this process; returns the running server (call `.stop()`)."""
    return EmulatorServer(emu, host, port, **kwargs).start()
