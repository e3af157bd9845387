"""Simulation measurements (collector) and their reports (CSV/JSON, summary table, PNG CDFs)."""
