"""The import graph of the project's own packages: no cycles, CLI modules at the top only, and the
state board between the loops and the advice face (DESIGN.md principles 1 and 15).

Imports are read with `ast` (module level and inside functions alike, relative ones resolved):
an edge A -> B for every project module B that A imports. Cycles are the strongly connected
components of more than one module (Tarjan's algorithm).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harvester", "rm_client", "hdfs_placement")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):  # generated gRPC code
                continue
            out[_module_name(path)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (the closest existing module of each name)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                while name and name not in mods:
                    name = name.rpartition(".")[0]
                # a package's own __init__ is not a dependency of its submodules' imports of siblings
                if name and name != mod and not mod.startswith(name + "."):
                    graph[mod].add(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [{"a", "b"}]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}}, [{"a", "b", "c"}, {"d", "e"}]),
])
def test_cycles_are_the_strongly_connected_components(edges: dict[str, set[str]], expected: list[set[str]]) -> None:
    assert sorted(map(sorted, cycles(edges))) == sorted(map(sorted, expected))


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    # The emulator's last two cycles went with the fidelity work (issue 11): none is allowed.
    assert not cycles(graph), f"import cycles: {[sorted(c) for c in cycles(graph)]}"


def test_cli_modules_are_imported_only_by_cli_modules(graph: dict[str, set[str]]) -> None:
    def is_cli(mod: str) -> bool:
        return mod.startswith("harvester.cli") and mod.count(".") == 1

    assert all(is_cli(m) for m in graph if m.startswith("harvester.cli")), "cli modules sit at harvester/ top level"
    wrong = {m: sorted(d for d in deps if is_cli(d)) for m, deps in graph.items()
             if not is_cli(m) and m != "harvester.__main__" and any(is_cli(d) for d in deps)}
    assert not wrong, f"modules below the top level import a cli module: {wrong}"


@pytest.mark.parametrize("reader, writer", [
    ("harvester.advice", "harvester.loop"),    # the advice face reads the state board, never a loop
    ("harvester.loop", "harvester.advice"),    # loops publish on the board, never into the advice face
    ("harvester.board", "harvester.loop"),
    ("harvester.board", "harvester.advice"),
])
def test_loops_and_advice_meet_only_on_the_board(graph: dict[str, set[str]], reader: str, writer: str) -> None:
    bad = {m: sorted(d for d in deps if d == writer or d.startswith(writer + "."))
           for m, deps in graph.items() if m == reader or m.startswith(reader + ".")}
    assert not {m: d for m, d in bad.items() if d}, f"{reader} imports {writer}"
