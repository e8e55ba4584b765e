"""The functions that ran inside a target: what Dynamo really traced, as entry points.

Verify compares twice: once with the compiled regions torchlint works out on its own, as
`torchlint check` does, and once taking every function that ran under the target for
compiled code. The second view measures the rules apart from region inference: a break
in a scheduler the model received as an argument is a region miss, not a rule miss.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=512)
def _function_bodies(path: str) -> tuple[tuple[int, int, str], ...]:
    """(first body line, last line, qualified name) of every function, innermost last."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                found.append((child.body[0].lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(found)


def functions_that_ran(path: str, lines: set[int]) -> set[str]:
    """Qualified names (`Class.method`) of the functions whose own lines ran."""
    bodies = _function_bodies(path)
    ran: set[str] = set()
    for line in lines:
        inside = [(first, name) for first, last, name in bodies if first <= line <= last]
        if inside:
            ran.add(max(inside)[1])  # the innermost: the one that starts last
    return ran
