"""Load the recorded HTTP exchanges of fixtures/yarn-3.3.6/captures and replay them.

`<name>.http.txt` gives the request line and headers and the response status and headers;
`<name>.request.json` the exact request body bytes; `<name>.json` (or `.xml`) the exact
response body. `World` is an emulator on a SimClock served over real HTTP on loopback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import requests

from harvester.clock import SimClock
from harvester.domain import Resources
from harvester.emulator import Emulator, EmulatorConfig, EmulatorServer, QueueConfig, Workload
from shape import Answer

N1, N2 = "localhost:45454", "localhost:45455"


@dataclass(frozen=True)
class Capture:
    name: str
    method: str
    target: str                      # path + query as sent to the RM
    headers: dict[str, str]
    body: bytes
    answer: Answer


def load_capture(captures: Path, name: str) -> Capture:
    text = (captures / f"{name}.http.txt").read_text()
    request, _, response = text.partition("### RESPONSE")
    req_lines = request.replace("### REQUEST", "").strip("\n").splitlines()
    method, url = req_lines[0].split(" ", 1)
    headers = {}
    for line in req_lines[1:]:
        if not line.strip():
            break
        k, _, v = line.partition(":")
        headers[k.strip()] = v.strip()
    resp_head = response.partition("### BODY")[0].strip().splitlines()
    status = int(resp_head[0].split()[1])
    ctype = next((line.split(":", 1)[1].strip() for line in resp_head if line.lower().startswith("content-type:")), "")
    req_file = captures / f"{name}.request.json"
    body = req_file.read_bytes() if req_file.exists() else b""
    resp_file = captures / f"{name}.json"
    if not resp_file.exists():
        resp_file = captures / f"{name}.xml"
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return Capture(name, method, target, headers, body,
                   Answer(status, ctype, resp_file.read_text(encoding="utf-8")))


def recorded_answer(captures: Path, name: str) -> Answer:
    """An answer recorded without its .http.txt (the MR captures): 200 JSON."""
    return Answer(200, "application/json;charset=utf-8", (captures / f"{name}.json").read_text())


@dataclass
class World:
    """An emulator like the recorded pseudo-cluster: 2 NMs x 8192 MB / 8 vcores on one 2-core host."""

    cluster_ts_ms: int
    queues: tuple[QueueConfig, ...] = (QueueConfig("default", 100.0, reservable=True),)
    nodes: tuple[str, ...] = (N1, N2)
    # yarn.scheduler.minimum-allocation: the first recorded cluster granted 512 MB containers as
    # such (captures/apps-id-appattempts-id-containers), the 2026-11-24 one logged 1024 MB
    minimum: Resources = Resources(1024, 1)
    n2_web_port: int = 8142          # the second NM's web port (8044 on the 2026-11-24 cluster)
    clock: SimClock = field(init=False)
    emu: Emulator = field(init=False)
    work: Workload = field(init=False)
    server: EmulatorServer = field(init=False)

    def __post_init__(self) -> None:
        self.base = self.cluster_ts_ms / 1000.0
        self.clock = SimClock(start=self.base)
        self.emu = Emulator(self.clock, EmulatorConfig(cluster_ts_ms=self.cluster_ts_ms, queues=self.queues,
                                                       minimum_allocation=self.minimum))
        self.work = Workload(self.emu)
        http = {N1: "localhost:8042", N2: f"localhost:{self.n2_web_port}"}
        self.work.add_nodes(list(self.nodes), Resources(8192, 8), physical_cores=2,
                            http_addresses=[http.get(n, "localhost:8042") for n in self.nodes],
                            host_memory_mb=24576.0, base_memory_mb=700.0)
        self.server = EmulatorServer(self.emu).start()
        self.session = requests.Session()

    def at(self, offset_s: float) -> None:
        """Move the clock to cluster start + offset (never backwards)."""
        self.clock.set(max(self.clock.now(), self.base + offset_s))

    def send(self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b"") -> Answer:
        r = self.session.request(method, self.server.url + target, headers=headers or {}, data=body or None,
                                 timeout=30)
        return Answer(r.status_code, r.headers.get("Content-Type", ""), r.text)

    def replay(self, cap: Capture) -> Answer:
        headers = {k: v for k, v in cap.headers.items() if k.lower() in ("accept", "content-type")}
        target = cap.target
        if target.startswith("/ws/v1/node/"):  # the NM at 127.0.0.1:8042 is localhost:45454
            target = f"/nm/{N1}" + target
        return self.send(cap.method, target, headers, cap.body)

    def close(self) -> None:
        self.server.stop()
        self.session.close()
