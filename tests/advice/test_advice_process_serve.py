"""`harvester serve` with `server.grpc_advice_process` (and CPUs): the embedded default answers
SelectClasses from the advice process, reports it in /status, and stops both processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc

from harvester.v1 import common_pb2, yarn_advisor_pb2, yarn_advisor_pb2_grpc
from ports import free_port, http_get, wait_ready


def _allowed_cpus(pid: int, tid: int | None = None) -> str:
    path = f"/proc/{pid}/task/{tid}/status" if tid else f"/proc/{pid}/status"
    line = next(l for l in Path(path).read_text().splitlines() if l.startswith("Cpus_allowed_list:"))
    return line.split(":", 1)[1].strip()


def test_serve_with_an_advice_process_pinned_to_its_cpu(tmp_path: Path) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    pinned = len(cpus) >= 2
    grpc_port, admin_port = free_port(), free_port()
    cfg = tmp_path / "h.yaml"
    cfg.write_text(
        f"server:\n  grpc_listen: 127.0.0.1:{grpc_port}\n  admin_listen: 127.0.0.1:{admin_port}\n"
        f"  grpc_advice_process: true\n" + (f"  grpc_advice_cpus: [{cpus[0]}]\n" if pinned else "")
        + f"store:\n  path: {tmp_path / 'h.db'}\nembedded:\n  listen: 127.0.0.1:{free_port()}\n"
    )
    proc = subprocess.Popen([sys.executable, "-m", "harvester", "serve", "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{admin_port}"
        wait_ready(base, proc, timeout_s=60)
        doc = json.loads(http_get(base + "/status")[1])["grpc"]
        advice = doc["advice_process"]
        assert advice["alive"] and advice["restarts"] == 0 and doc["address"] == f"127.0.0.1:{grpc_port}"
        if pinned:
            assert _allowed_cpus(advice["pid"]) == str(cpus[0])
            rest = ",".join(map(str, cpus[1:]))
            tids = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task")]
            assert {_allowed_cpus(proc.pid, t) for t in tids} <= {rest, f"{cpus[1]}-{cpus[-1]}"}, "every loop thread"

        request = yarn_advisor_pb2.SelectClassesRequest(job_name="demo", max_concurrent_containers=8, seed=1,
                                                        container=common_pb2.Resources(memory_mb=1024, vcores=1))
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as ch:
            stub = yarn_advisor_pb2_grpc.YarnAdvisorStub(ch)
            deadline = time.monotonic() + 60
            while True:  # the demo's classes: after the first refit and guard period
                try:
                    answer = stub.SelectClasses(request, timeout=5)
                    break
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.details()
                    assert time.monotonic() < deadline, "no classes within 60 s"
                    time.sleep(0.5)
            assert answer.classes and answer.model_version >= 1
            nodes = stub.ListNodeCapacities(yarn_advisor_pb2.ListNodeCapacitiesRequest(), timeout=5)  # forwarded
            assert len(nodes.nodes) == 12
        metrics = http_get(base + "/metrics")[1].decode()
        assert 'harvester_grpc_requests_total{code="OK",method="/harvester.v1.YarnAdvisor/ListNodeCapacities"}' in metrics

        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 10.0
        assert not Path(f"/proc/{advice['pid']}/cmdline").exists() or \
            "zombie" in Path(f"/proc/{advice['pid']}/status").read_text().lower()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
