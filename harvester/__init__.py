"""Harvester: a history-based scheduling advisor for Hadoop clusters shared with primary tenants."""

__version__ = "0.1.0"
