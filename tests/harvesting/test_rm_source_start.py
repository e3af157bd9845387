"""A sidecar with `cluster.source: rm` starts NOT READY while the RM cannot be reached — it does
not exit (docs/deploy.md): /healthz 200 at once, /readyz 503 naming the failing loop, and the
log says so in one line per failure cause (observability/logs.RepeatFilter)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from rm_fakes import closed_port_url


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, json.loads(r.read() or b"null") if r.headers.get_content_type() == "application/json" else {}
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def test_rm_unreachable_starts_not_ready_and_logs_one_line_per_cause(tmp_path: Path) -> None:
    rm = closed_port_url()
    admin = _free_port()
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"server:\n  grpc_listen: 127.0.0.1:0\n  admin_listen: 127.0.0.1:{admin}\n"
                   f"store:\n  path: {tmp_path / 'h.db'}\ncluster:\n  source: rm\n"
                   f"rm:\n  urls: [{rm}]\n  max_retries: 0\ntelemetry:\n  poll_interval_s: 0.2\n")
    proc = subprocess.Popen([sys.executable, "-m", "harvester", "serve", "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{admin}"
    try:
        deadline = time.monotonic() + 30
        ready: tuple[int, dict] = (0, {})
        while time.monotonic() < deadline:
            try:
                if _get(base + "/healthz")[0] == 200:
                    ready = _get(base + "/readyz")
                    # wait for the failed RM poll itself, not "no successful tick yet" before it
                    if ready[0] == 503 and any(p.startswith("rm: loop telemetry: ") for p in ready[1]["problems"]):
                        break
            except OSError:
                pass  # not listening yet
            assert proc.poll() is None, f"the sidecar exited: {proc.stderr.read() if proc.stderr else ''}"
            time.sleep(0.1)
        assert ready[0] == 503, ready
        assert any(p.startswith("rm: loop telemetry: ") for p in ready[1]["problems"]), ready  # the dependency first (issue 15)
        time.sleep(1.0)  # about five more failed polls
        assert proc.poll() is None, "still running, not ready"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    failed = [line for line in err.splitlines() if "tick failed" in line and "loop=telemetry" in line]
    assert len(failed) == 1, err  # one line for this cause, however many ticks failed
    assert rm in failed[0] and "connection refused" in failed[0]
    assert "Traceback" not in err
