"""Where a file's loops, `try` and `with` statements begin and end, read with `ast`: verify
asks for them both in the worker (which `with` held a break) and when comparing (which
breaks a TL6xx finding's block holds)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, getattr(ast, "TryStar", ast.Try))
WITH_STATEMENTS = (ast.With, ast.AsyncWith)


@lru_cache(maxsize=256)
def block_spans(path: str) -> tuple[tuple[type, int, int], ...]:
    """(statement type, first line, last line) of each loop, `try` and `with` statement;
    nothing for a file that cannot be read or parsed."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    return tuple(
        (type(node), node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree) if isinstance(node, _BLOCKS)
    )
