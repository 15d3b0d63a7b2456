"""The module-level import graph of ``src/`` (every import, also inside functions and
``TYPE_CHECKING`` blocks, as grimp reads them) has no cycle, and the modules keep their size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import grimp

SRC = Path(__file__).resolve().parents[1] / "src" / "mini_codex"


def strongly_connected(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components with more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(sorted(component))
    return found


def test_the_finder_finds_a_cycle() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e"]}
    assert sorted(strongly_connected(graph)) == [["a", "b", "c"], ["e"]]


def test_src_has_no_import_cycle() -> None:
    imports = grimp.build_graph("mini_codex", include_external_packages=False)
    graph = {
        module: sorted(imports.find_modules_directly_imported_by(module))
        for module in imports.modules
    }
    assert len(graph) > 200  # the whole package was read
    assert strongly_connected(graph) == []


def test_no_module_over_600_lines_and_at_most_8_over_400() -> None:
    sizes = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SRC.rglob("*.py")
    }
    assert {name: lines for name, lines in sizes.items() if lines > 600} == {}
    over_400 = sorted(name for name, lines in sizes.items() if lines > 400)
    assert len(over_400) <= 8, over_400
