"""`harvester whatif`: replay the sidecar's history through the simulator (issue 28, docs/whatif.md)."""

from harvester.whatif.api import POLICIES, run_whatif
from harvester.whatif.recorded import WhatifInputError

__all__ = ["POLICIES", "WhatifInputError", "run_whatif"]
