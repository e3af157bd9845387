"""Where the evaluations read their traces and write their reports when not told (issue 25).

- Traces: `--traces DIR`, else the samples vendored in the repository (`tests/data/shared/traces`,
  what a fresh clone has). Two of those files are CUT for size (tests/data/shared/README.md);
  `traces_note` says so in the output of a run that reads one, since its figures then differ
  from the reports'. The full staged traces are `--traces ../shared/traces`.
- Reports: `--out DIR`, else `var/eval/<name>` in the current directory (beside `simulate`'s
  `var/sim`; `/var/` is ignored by git), never the tracked `docs/evaluation`: the documented
  reproduction commands pass `--out docs/evaluation` themselves.
argparse only, like harvester/arglists.py: the CLI registers these without importing the simulator.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

#: The public trace samples vendored in the repository (tests/data/shared/README.md).
VENDORED_TRACES = Path(__file__).resolve().parents[1] / "tests" / "data" / "shared" / "traces"
#: The vendored files cut for size: path under the traces folder -> what the cut keeps.
CUT = {
    "bitbrains-rnd-7d/bitbrains_rnd_2013-08_7days_500vms.csv.gz": "the rows of VMs 1-20 of 500",
    "backblaze-2013/drive_stats_2013-04-10_to_2013-05-19_10cols.csv.gz": "the first 100,000 rows",
}
#: The parent of every default report folder.
EVAL_HOME = Path("var") / "eval"


def default_out(name: str) -> Path:
    """The report folder of evaluation `name` when `--out` is not given."""
    return EVAL_HOME / name


def add_traces_and_out(parser: argparse.ArgumentParser, name: str, holds: str) -> None:
    """`--traces DIR` (default: the vendored samples) and `--out DIR` (default var/eval/<name>)."""
    parser.add_argument("--traces", type=Path, default=VENDORED_TRACES, metavar="DIR",
                        help=f"the traces folder holding {holds} (default: the samples vendored in the repository, "
                             "tests/data/shared/traces; the full staged traces: ../shared/traces)")
    parser.add_argument("--out", type=Path, default=default_out(name), metavar="DIR",
                        help=f"report folder (default {default_out(name)}; the published reports: --out docs/evaluation)")


def full_or_vendored_traces(repo: Path) -> Path:
    """The benchmarks' default: the full public traces beside the checkout (../shared/traces, as
    the reports were measured) when present, else the vendored samples (a fresh clone)."""
    full = repo.parent / "shared" / "traces"
    return full if full.is_dir() else VENDORED_TRACES


def is_vendored(traces: Path) -> bool:
    return traces.resolve() == VENDORED_TRACES.resolve()


def traces_note(traces: Path, reads: Iterable[str]) -> str:
    """One line when `traces` is the vendored copy ("" otherwise): that it is, and which of the
    files this run reads (`reads`: paths under the folder, or any text naming them) are cut."""
    if not is_vendored(traces):
        return ""
    text = " ".join(reads)
    cut = [f"{path} ({kept})" for path, kept in CUT.items() if path in text]
    note = f"note: traces from the samples vendored in the repository ({VENDORED_TRACES})"
    if cut:
        note += (f"; CUT for size: {'; '.join(cut)} — the figures differ from the published reports; "
                 "--traces ../shared/traces for the full traces")
    return note
