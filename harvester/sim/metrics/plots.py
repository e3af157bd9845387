"""PNG figures (matplotlib, Agg backend): CDFs like the papers' figures, utilization over time.

matplotlib is imported by `pyplot()` when a figure is drawn, not with the module (start-up cost).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_job_cdf(series: Mapping[str, Sequence[float | None]], path: Path, title: str = "") -> Path:
    """CDF of job execution time, one line per label (e.g. per policy), log-scaled time."""
    fig, ax = pyplot().subplots(figsize=(6, 4))
    for label, values in series.items():
        x = np.sort(np.array([v for v in values if v is not None], dtype=np.float64))
        if x.size:
            ax.step(np.maximum(x, 1e-3), np.arange(1, x.size + 1) / x.size, where="post", label=f"{label} (n={x.size})")
    ax.set_xscale("log")
    return _save(fig, ax, path, title, "job execution time (s)", "CDF of jobs", "lower right")


def plot_utilization(util: np.ndarray, total_cores: float, path: Path, title: str = "") -> Path:
    """Primary and batch CPU (stacked) as a share of all cores, per primary step."""
    fig, ax = pyplot().subplots(figsize=(7, 3.5))
    if util.size:
        hours = util[:, 0] / 3600.0
        primary = util[:, 1] / total_cores
        batch = util[:, 2] / total_cores
        ax.stackplot(hours, primary, batch, labels=["primary", "batch (harvested)"], alpha=0.8)
    return _save(fig, ax, path, title, "simulated time (h)", "share of all cores", "upper right")


def _save(fig: Any, ax: Any, path: Path, title: str, xlabel: str, ylabel: str, legend: str) -> Path:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend(loc=legend)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return path
