"""`torch._dynamo.config.<name> = <constant>`: the Dynamo settings a project sets in code.

Found at module level and inside functions alike (a `main()` that sets them before
compiling is the common case), through any import spelling: `torch._dynamo.config.x`,
`import torch._dynamo as dynamo; dynamo.config.x`, `from torch._dynamo import config`.
`config.patch(...)` contexts are left alone: they hold only for their block.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

DYNAMO_CONFIG = "torch._dynamo.config"

ConfigValue = bool | int | str


def mentions_dynamo(text: str) -> bool:
    """A cheap test: a file that never says `_dynamo` sets none of its config."""
    return "_dynamo" in text


def merge(configs: Iterable[Mapping[str, ConfigValue]]) -> dict[str, ConfigValue]:
    """One dict for the project: files in the order given (by path), a later file winning."""
    merged: dict[str, ConfigValue] = {}
    for config in configs:
        merged.update(config)
    return merged


def dynamo_config_of(text: str) -> dict[str, ConfigValue]:
    """The `torch._dynamo.config` assignments of one file, read with Python's own parser: the
    project's compile profile is needed before any file is analysed, and only the few files
    that say `_dynamo` are read for it."""
    if not mentions_dynamo(text):
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    # local name -> what it stands for, from the file's imports (wherever they are)
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    names[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found: dict[str, ConfigValue] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Attribute) and _dotted(target.value, names) == DYNAMO_CONFIG:
                result = _literal(value)
                if result is not None:
                    found[target.attr] = result
    return found


def _dotted(node: ast.expr, names: Mapping[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)])


def _literal(node: ast.expr | None) -> ConfigValue | None:
    """The value of a bool, int or str literal (`-1` included); None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal(node.operand)
        return -value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, str)):
        return node.value
    return None
