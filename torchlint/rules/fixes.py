"""Fixes as rules build them: text put before or in place of nodes of the tree. The engine
turns them into a finding's edits (rows and columns) once it knows where the nodes are."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.report.diagnostic import Applicability
from torchlint.analysis.scopes import dotted_name

GUARD_TEST = "not torch.compiler.is_compiling()"


@dataclass(frozen=True)
class NodeEdit:
    node: cst.CSTNode
    content: str
    # True: ``content`` goes in front of the node; False: it replaces the node's code.
    before: bool = False
    # Put in front of each further line of the node (not inside a string): a statement moved
    # into a block keeps its continuation lines in step.
    indent_more: str = ""
    # True: the edit covers the node's whole rows, from the first row's start to the start of
    # the row after the last (a statement removed leaves no blank line behind).
    whole_lines: bool = False


@dataclass(frozen=True)
class FixPlan:
    message: str
    applicability: Applicability
    edits: tuple[NodeEdit, ...]
    # A module-level `import torch` the fixed code needs and the file lacks; the engine
    # puts it before the node given.
    import_torch_before: cst.CSTNode | None = None


def guard_statement(statement: cst.CSTNode, module: cst.Module, message: str) -> FixPlan | None:
    """`if not torch.compiler.is_compiling():` around one statement (a simple one on a line of
    its own, or an `if` with all its branches), so it runs in eager mode only (unsafe: while
    compiling it no longer runs). None where the statement shares its line.

    A module that imports from torch gets `import torch` at the top where it lacks it. One that
    imports nothing from torch may have to load without it (transformers' `import_utils`), so
    the guard imports torch where it runs instead."""
    simple = isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
    if not (simple or isinstance(statement, cst.If)):
        return None
    # The engine fills in the file's line ending and the statement's own indentation once it
    # knows them; the body goes one step of the file's own indentation further in.
    prefix = f"if {GUARD_TEST}:{{newline}}{{indent}}{module.default_indent}"
    anchor = None
    if not binds_torch(module):
        anchor = _first_import(module) if _imports_from_torch(module) else None
        if anchor is None:
            prefix = f"import torch{{newline}}{{indent}}{prefix}"
    edit = NodeEdit(statement, prefix, before=True, indent_more=module.default_indent)
    return FixPlan(message, Applicability.UNSAFE, (edit,), anchor)


def binds_torch(module: cst.Module) -> bool:
    """The module binds `torch` itself at its top level (`import torch`, not `as th`)."""
    return any(
        isinstance(small, cst.Import)
        and any(alias.asname is None and (dotted_name(alias.name) or "").split(".")[0] == "torch" for alias in small.names)
        for small in _top_level_imports(module)
    )


def _imports_from_torch(module: cst.Module) -> bool:
    """Any module-level import of torch or of a part of it (`from torch import nn`, `import torch as th`)."""
    for small in _top_level_imports(module):
        if isinstance(small, cst.Import):
            names = [dotted_name(alias.name) or "" for alias in small.names]
        else:
            names = [dotted_name(small.module) or ""] if small.module is not None else []
        if any(name == "torch" or name.startswith("torch.") for name in names):
            return True
    return False


def _top_level_imports(module: cst.Module) -> Iterator[cst.Import | cst.ImportFrom]:
    """The `import` and `from ... import` statements at the module's top level."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    yield small


def _first_import(module: cst.Module) -> cst.CSTNode | None:
    """The first module-level import that `import torch` may go before (not a `__future__` one)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], (cst.Import, cst.ImportFrom)):
            first = statement.body[0]
            if isinstance(first, cst.ImportFrom) and first.module is not None and dotted_name(first.module) == "__future__":
                continue
            return statement
    return None



def enclosing_block(statement: cst.CSTNode, within: cst.CSTNode) -> cst.IndentedBlock | None:
    """The indented block of ``within`` whose body holds ``statement`` itself."""
    found = None

    def visit(node: cst.CSTNode) -> bool | None:
        nonlocal found
        if isinstance(node, cst.IndentedBlock) and any(line is statement for line in node.body):
            found = node
        return True if found is not None else None

    walk(within, visit)
    return found


def _removable(statement: cst.CSTNode) -> bool:
    """One simple statement with no comment on its row, which deleting the row would lose."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and statement.trailing_whitespace.comment is None
    )


def remove_statement(
    statement: cst.CSTNode, within: cst.CSTNode, message: str, applicability: Applicability,
    removed_too: Callable[[cst.CSTNode], bool],
) -> FixPlan | None:
    """One simple statement on rows of its own deleted; None where a comment on its row would
    go with it. ``removed_too`` tells the statements of the same block that their own fixes
    delete in the same pass: where they and this one are all the block holds, the last of them
    leaves `pass` behind."""
    if not _removable(statement):
        return None
    block = enclosing_block(statement, within)
    if block is None:
        return None
    going = [line for line in block.body if line is statement or (_removable(line) and removed_too(line))]
    content = "{indent}pass{newline}" if len(going) == len(block.body) and going[-1] is statement else ""
    return FixPlan(message, applicability, (NodeEdit(statement, content, whole_lines=True),))


def as_content(code: str) -> str:
    """``code`` as a `NodeEdit`'s content, which the engine formats: its braces doubled."""
    return code.replace("{", "{{").replace("}", "}}")


def replace_node(node: cst.CSTNode, code: str, message: str, applicability: Applicability) -> FixPlan:
    """``node``'s code replaced with ``code``."""
    return FixPlan(message, applicability, (NodeEdit(node, as_content(code)),))
