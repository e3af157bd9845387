"""`--progress-json PATH`: {"fraction": 0..1, "stage": "...", "started": ts, "updated": ts},
written atomically (a temporary file in the same folder, then `os.replace`), so a reader (the
sidecar's GET /v1/whatif) never sees half a file. The clock is injected."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Callable

from harvester.observability.progress import Progress


class ProgressFile:
    """Progress to a JSON file (when a path is given) and to the terminal's bar (when quiet is off)."""

    def __init__(self, path: str | Path | None, *, bar: bool, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path) if path else None
        self.clock = clock
        self.started = clock()
        self.bar = Progress(1.0, "whatif", quiet=not bar, fmt=lambda x: f"{x:.0%}")
        self.fraction = 0.0
        self.stage = ""

    def __call__(self, fraction: float, stage: str) -> None:
        self.fraction, self.stage = max(self.fraction, min(1.0, float(fraction))), stage
        self.bar.update(self.fraction, stage)
        if self.path is not None:
            write_atomic(self.path, {"fraction": round(self.fraction, 4), "stage": stage,
                                     "started": self.started, "updated": self.clock()})

    def close(self) -> None:
        self.bar.close()


def write_atomic(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
