"""Where the tests find the recorded Hadoop fixtures and the staged traces.

Default: the copies vendored in tests/data/shared (so the suite runs wherever CI clones the
repository); `HARVESTER_FIXTURES_DIR` / `HARVESTER_TRACES_DIR` point elsewhere, e.g. at
../shared to test against the originals.
"""

from __future__ import annotations

import os
from pathlib import Path

VENDORED = Path(__file__).resolve().parents[1] / "data" / "shared"

FIXTURES_DIR = Path(os.environ.get("HARVESTER_FIXTURES_DIR") or VENDORED / "fixtures")
TRACES_DIR = Path(os.environ.get("HARVESTER_TRACES_DIR") or VENDORED / "traces")
