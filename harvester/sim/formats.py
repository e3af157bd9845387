"""Trace format names (kept import-light for the CLI; the loaders' registries must match)."""

UTILIZATION_FORMAT_NAMES = ("bitbrains", "alibaba-machines", "utilization-csv")
JOB_FORMAT_NAMES = ("alibaba-2018-dags", "alibaba-2017-batch", "swim", "hawk-eagle", "jobs-csv")
