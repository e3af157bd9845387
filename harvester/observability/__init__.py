"""Observability: every metric is declared in `metrics.py`; logging set-up in `logs.py`."""
