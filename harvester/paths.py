"""Where Harvester keeps per-user state by default: `$XDG_STATE_HOME/harvester`
(`~/.local/state/harvester` without it), whatever the current directory — the history store of
the settings that name none (config.py) and the embedded default's local admin token
(admin_token.py), so that the CLI finds what `harvester serve` wrote."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """`$XDG_STATE_HOME/harvester`, or `~/.local/state/harvester` (a relative XDG_STATE_HOME is ignored, as the spec says)."""
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if state and Path(state).is_absolute() else Path.home() / ".local" / "state"
    return base / "harvester"
