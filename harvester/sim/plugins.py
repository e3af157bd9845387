"""Load a plug-in named in a scenario as `package.module:callable` (policies, controllers, reimages)."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def load_callable(spec: str, what: str) -> Callable[..., Any]:
    """The callable `spec` names; ValueError (one line, naming `what`) if it cannot be loaded."""
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{what} {spec!r}: use package.module:callable")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load {what} {spec!r}: {exc}") from None
    if not callable(obj):
        raise ValueError(f"{what} {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]
