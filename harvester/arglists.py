"""One parser for list options of every evaluate command (`--levels 0.25 0.5` or `--levels 0.25,0.5`).

`add_number_list(parser, "--levels", float, ...)` accepts the values separated by spaces, by
commas, or both (`--levels 0.2,0.35 0.5`), and stores one flat list. argparse only: the CLI
modules and the simulator's own entry points (e.g. `python -m harvester.sim.jockey.evaluate`)
share it without importing anything heavy.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Sequence


def number_list(kind: Callable[[str], Any], what: str) -> Callable[[str], list[Any]]:
    """An argparse type: one argument, its comma-separated values converted by `kind`."""
    def parse(text: str) -> list[Any]:
        try:
            return [kind(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} separated by spaces or commas, got {text!r}") from None
    return parse


class _Flatten(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, [x for part in values or () for x in part])


def add_number_list(parser: argparse.ArgumentParser, flag: str, kind: Callable[[str], Any], *, default: Any = None,
                    help: str = "", metavar: str = "N") -> None:
    """`flag` takes one or more values, separated by spaces and/or commas."""
    what = "integers" if kind is int else "numbers"
    parser.add_argument(flag, type=number_list(kind, what), nargs="+", action=_Flatten, default=default,
                        metavar=metavar, help=f"{help} (spaces or commas)".strip())
