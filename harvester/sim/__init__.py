"""The simulator and the YARN emulator: one cluster model (`cluster.py`), two faces.

The simulator drives the model from a discrete-event engine; the emulator serves it over the
RM's REST API. Both run Harvester's own decision code through the Clock, TelemetrySource and
Actuator ports.
"""
