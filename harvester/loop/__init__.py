"""Control loops: components that run one reconcile tick every interval on an injected Clock."""

from harvester.loop.runner import ControlLoop, TickResult

__all__ = ["ControlLoop", "TickResult"]
