"""Telemetry: observing the cluster. `TelemetrySource` is the port."""

from harvester.telemetry.source import TelemetryError, TelemetrySource

__all__ = ["TelemetryError", "TelemetrySource"]
