"""Actuators: the only code that changes the cluster. `Actuator` is the port."""

from harvester.actuators.port import Actuator
from harvester.actuators.recording import RecordingActuator

__all__ = ["Actuator", "RecordingActuator"]
