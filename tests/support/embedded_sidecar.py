"""The embedded default (`make run`) in-process, over real HTTP, on free ports, with its loops
stepped by the test on a SimClock (no thread, no wall time): what the CLI tests talk to."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from prometheus_client import CollectorRegistry

from harvester.app import Harvester
from harvester.clock import SimClock
from harvester.config import Settings, parse_settings

T0 = 1_795_430_000.0


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def loopback_settings(store: dict[str, Any], overrides: dict[str, Any] | None = None) -> Settings:
    """The embedded default on free loopback ports (never the defaults `make run` holds), with
    `store` and then `overrides` merged over it."""
    base = {"server": {"grpc_listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "shutdown_grace_s": 0.2},
            "embedded": {"listen": "127.0.0.1:0"}, "store": store}
    return parse_settings(_merge(base, overrides or {}), environ={})


@contextmanager
def embedded_sidecar(store_path: Path, overrides: dict[str, Any] | None = None, t0: float = T0) -> Iterator[Harvester]:
    """The embedded default with only its ports (0) and its SQLite file changed (plus `overrides`);
    its clock starts at `t0`."""
    app = Harvester(loopback_settings({"backend": "sqlite", "path": str(store_path)}, overrides), clock=SimClock(t0),
                    registry=CollectorRegistry())
    app.start(run_loops=False)
    try:
        yield app
    finally:
        app.stop()


def run_control_periods(app: Harvester, periods: int = 3, step_s: float = 60.0) -> None:
    """Refit once, then `periods` × (poll, guard) `step_s` apart, as the live loops would. The demo's
    first heartbeat reads CPU 0.0 (unknown: the guard keeps the capacity), the second sample's
    increase waits for a confirming third (decisions/guard.py), so three periods end with a capacity
    raised."""
    assert app.loop("refit").run_once() is not None
    for _ in range(periods):
        assert app.loop("telemetry").run_once() is not None
        assert app.loop("guard").run_once() is not None
        app.clock.advance(step_s)  # type: ignore[attr-defined]


def settings_file(path: Path, app: Harvester, **server: str) -> Path:
    """A settings file naming this sidecar's admin address and store (what `make run` users have)."""
    admin = server.get("admin_listen", app.admin.address)
    path.write_text(f"server:\n  admin_listen: {admin}\nstore:\n  path: {app.settings.store.path}\n")
    return path


def run_loops(app: Harvester, seconds: float, *, step_s: float = 1.0,
              after: Callable[[str], None] | None = None) -> dict[str, int]:
    """Every loop as its thread would run it, on the app's SimClock: each ticks at start (in the
    control plane's order), then again `next_wait_s()` after its last tick (its interval, or its
    failure back-off); the clock moves `step_s` at a time for `seconds`. `after(name)` runs after
    each tick. Returns the ticks per loop."""
    clock = app.clock
    due = {loop.name: clock.now() for loop in app.loops}
    ticks = dict.fromkeys(due, 0)
    end = clock.now() + seconds
    while clock.now() <= end:
        for loop in app.loops:
            if due[loop.name] <= clock.now():
                loop.run_once()
                ticks[loop.name] += 1
                due[loop.name] = clock.now() + loop.next_wait_s()
                if after is not None:
                    after(loop.name)
        clock.advance(step_s)  # type: ignore[attr-defined]
    return ticks
