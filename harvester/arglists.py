"""One spelling for the options every evaluate command shares (issue 25).

- `add_number_list(parser, "--levels", float, ...)` accepts the values separated by spaces, by
  commas, or both (`--levels 0.2,0.35 0.5`), and stores one flat list; integer lists also take
  inclusive ranges (`--seeds 1-8`). Lists are lists everywhere: `--seeds 1,2,3`, never a count.
- `add_processes(parser, default)`: `--processes N`, the local worker processes of every command
  (`--workers` was the spelling of some; it still works, with a warning).
- `add_deprecated(parser, old, new)`: an old spelling kept working, with a warning on stderr
  naming the new one (hidden from --help).
argparse only: the CLI modules and the simulator's own entry points (e.g. `python -m
harvester.sim.jockey.evaluate`) share it without importing anything heavy.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Sequence


def _item(kind: Callable[[str], Any], text: str) -> list[Any]:
    """One comma-separated item: a value, or for integers an inclusive range `a-b`."""
    lo, sep, hi = text.strip().partition("-")
    if kind is int and sep and lo:
        first, last = int(lo), int(hi)
        if last < first or last - first > 100_000:
            raise ValueError(text)
        return list(range(first, last + 1))
    return [kind(text)]


def number_list(kind: Callable[[str], Any], what: str) -> Callable[[str], list[Any]]:
    """An argparse type: one argument, its comma-separated values converted by `kind`."""
    def parse(text: str) -> list[Any]:
        try:
            return [v for x in text.split(",") if x.strip() for v in _item(kind, x)]
        except ValueError:
            ranges = " or ranges like 1-4" if kind is int else ""
            raise argparse.ArgumentTypeError(f"expected {what} separated by spaces or commas{ranges}, got {text!r}") from None
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


class _Deprecated(argparse.Action):
    """Stores like the new option, after one warning on stderr naming it."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "", why: str = "", **kw: Any) -> None:
        super().__init__(option_strings, dest, **kw)
        self.new, self.why = new, why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        import sys

        print(f"{parser.prog}: warning: {option_string} is deprecated{self.why}; use {self.new} (the old spelling "
              "still works for now)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_deprecated(parser: argparse.ArgumentParser, old: str, new: str, *, dest: str, kind: Callable[[str], Any] = str,
                   why: str = "") -> None:
    """`old` kept working as an alias of `new` (same `dest`), with a warning; not in --help."""
    parser.add_argument(old, dest=dest, type=kind, action=_Deprecated, new=new, why=why, help=argparse.SUPPRESS,
                        default=argparse.SUPPRESS)


def add_processes(parser: argparse.ArgumentParser, default: int | None, help: str = "", *, alias: bool = True) -> None:
    """`--processes N` (local worker processes), and `--workers N`, its deprecated spelling where
    a command used it (`alias`)."""
    what = "one per core" if default is None else str(default)
    parser.add_argument("--processes", type=int, default=default, metavar="N",
                        help=help or f"local worker processes (default: {what})")
    if alias:
        add_deprecated(parser, "--workers", "--processes", dest="processes", kind=int)
