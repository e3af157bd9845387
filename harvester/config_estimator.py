"""The `estimator:` settings section: the Hadoop Resource Estimator 3.3.6 REST API served by
Harvester (advice/estimator_service.py, docs/morpheus.md "A drop-in Resource Estimator").

The solver's defaults are the Estimator's shipped `resourceestimator-config.xml` (fixtures
resourceestimator-3.3.6/README.md): alpha = beta = 0.1, minJobRuns = 2, timeInterval = 5.
It shares `server.tls`, the admin token (`server.auth`) and `server.allow_insecure_remote`:
a non-loopback `listen` needs TLS and the token, like the admin face (harvester/preflight.py).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from harvester.config_base import FilePath, Section, check_listen


def check_data_dir(v: Path | None) -> Path | None:
    """An existing directory (made absolute: the translator resolves paths against it)."""
    if v is None:
        return None
    v = v.expanduser()
    if not v.is_dir():
        raise ValueError(f"{v} is not a directory")
    return v.resolve()


class EstimatorSettings(Section):
    enabled: bool = Field(False, description="Serve the Resource Estimator API as part of `harvester serve` (`harvester estimator serve` runs it alone).")
    listen: str = Field("127.0.0.1:9998", description="Where it listens (host:port; the Estimator's port is 9998; 0 = any free port).")
    data_dir: FilePath | None = Field(None, description="The translator reads log files only inside this directory (a relative path is relative to it; an absolute one, translator//abs/path, must lie in it); null = the translator refuses every file.")
    open_writes: bool = Field(False, description="POST translator and DELETE without the admin token, as the Estimator (which has no authentication); loopback only unless server.allow_insecure_remote.")
    max_file_mb: float = Field(64.0, gt=0, le=4096, description="Largest log file the translator reads (MB).")
    alpha: float = Field(0.1, ge=0, le=1, description="solver.lp.alpha: weight of over- against under-allocation.")
    beta: float = Field(0.1, ge=0, le=1e6, description="solver.lp.beta: weight of the regularization term ε (fixed, as the Estimator).")
    min_job_runs: int = Field(2, ge=1, le=100_000, description="solver.lp.minJobRuns: fewest runs of a pipeline to estimate from.")
    time_interval: int = Field(5, ge=1, le=86_400, description="resourceestimator.timeInterval: width of a log unit and of a solver step (the log's time unit).")
    max_steps: int = Field(100_000, ge=10, le=10_000_000, description="A run spanning more solver steps than this is refused (the LP grows with runs × steps).")
    time_limit_s: float = Field(60.0, gt=0, le=3600, description="HiGHS time budget for one estimate.")

    _listen = field_validator("listen")(check_listen)
    _dir = field_validator("data_dir")(check_data_dir)
