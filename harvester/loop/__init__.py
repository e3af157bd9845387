"""Control loops: components that run one reconcile tick every interval on an injected Clock."""

from harvester.loop.runner import ControlLoop, LoopSpec, TickResult

__all__ = ["ControlLoop", "LoopSpec", "TickResult"]
