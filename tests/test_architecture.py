"""The code's shape as docs/architecture.md states it: no import circle among the
product's modules, counting imports made inside functions."""

from __future__ import annotations

import grimp

PRODUCT = ("campaign", "config", "embedded_judge", "frontend", "grading", "infrastructure",
           "scoring", "submissions")


def import_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = [stack.pop()]
            while group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return circles


def test_no_module_imports_itself_back_through_others() -> None:
    graph = grimp.build_graph(*PRODUCT)

    assert import_circles(graph) == []


def test_a_circle_is_found_where_there_is_one() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.one", "a.two", "a.three"):
        graph.add_module(module)
    graph.add_import(importer="a.one", imported="a.two")
    graph.add_import(importer="a.two", imported="a.one")
    graph.add_import(importer="a.two", imported="a.three")

    assert import_circles(graph) == [["a.one", "a.two"]]
