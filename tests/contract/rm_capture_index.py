"""Read the recorded Hadoop 3.3.6 RM captures: INDEX.txt -> (name, status, method, path, body).

Shared by the rm_client contract tests (not a test module itself)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from shared_paths import FIXTURES_DIR

CAPTURES = FIXTURES_DIR / "yarn-3.3.6" / "captures"
SCENARIOS = FIXTURES_DIR / "yarn-3.3.6" / "scenarios"

# Three INDEX lines (tab-separated, appended later) carry a description instead of a URL and
# have no .http.txt; their URLs follow from the ids inside their bodies.
_URL_OF_UNLINKED = {
    "apps-id-running-with-pending-requests": "/ws/v1/cluster/apps/application_1795431985705_0005",
    "scheduler-while-queue-full": "/ws/v1/cluster/scheduler",
    "apps-id-appattempts-id-containers-16-running": "/ws/v1/cluster/apps/application_1795431985705_0005"
    "/appattempts/appattempt_1795431985705_0005_000001/containers",
}


@dataclass(frozen=True)
class Capture:
    name: str
    status: int
    method: str
    path: str  # without the query string
    query: str
    body_file: Path

    @property
    def body(self) -> bytes:
        return self.body_file.read_bytes()

    @property
    def request_file(self) -> Path:
        return CAPTURES / f"{self.name}.request.json"

    @property
    def content_type(self) -> str | None:
        http = CAPTURES / f"{self.name}.http.txt"
        if not http.exists():
            return None
        response = http.read_text().split("### RESPONSE", 1)[-1]
        for line in response.splitlines():
            if line.lower().startswith("content-type:"):
                return line.split(":", 1)[1].strip()
        return None


def load_index() -> list[Capture]:
    out = []
    for line in (CAPTURES / "INDEX.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if "\t" in line:
            name, status, _size, desc = line.split("\t")
            method, url = desc.split()[0], _URL_OF_UNLINKED[name]
        else:
            parts = line.split()
            name, status, method, url = parts[0], parts[2], parts[-2], parts[-1]
        split = urlsplit(url)
        suffix = ".xml" if (CAPTURES / f"{name}.xml").exists() else ".json"
        out.append(Capture(name, int(status), method, split.path, split.query, CAPTURES / f"{name}{suffix}"))
    return out
