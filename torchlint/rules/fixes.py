"""Fixes as rules build them: text put before or in place of nodes of the tree. The engine
turns them into a finding's edits (rows and columns) once it knows where the nodes are."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.diagnostic import Applicability
from torchlint.semantic.scopes import dotted_name

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


@dataclass(frozen=True)
class FixPlan:
    message: str
    applicability: Applicability
    edits: tuple[NodeEdit, ...]
    # A module-level `import torch` the fixed code needs and the file lacks; the engine
    # puts it before the node given.
    import_torch_before: cst.CSTNode | None = None


def guard_statement(statement: cst.CSTNode, module: cst.Module, message: str) -> FixPlan | None:
    """`if not torch.compiler.is_compiling():` around one simple statement on a line of its
    own, so it runs in eager mode only (unsafe: while compiling it no longer runs). None
    where the statement shares its line or the file gives no place for `import torch`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    imported = binds_torch(module)
    anchor = None if imported else _first_import(module)
    if not imported and anchor is None:
        return None
    # The engine fills in the file's line ending and the statement's own indentation once it
    # knows them; the body goes one step of the file's own indentation further in.
    prefix = f"if {GUARD_TEST}:{{newline}}{{indent}}{module.default_indent}"
    edit = NodeEdit(statement, prefix, before=True, indent_more=module.default_indent)
    return FixPlan(message, Applicability.UNSAFE, (edit,), anchor)


def binds_torch(module: cst.Module) -> bool:
    """The module binds `torch` itself at its top level (`import torch`, not `as th`)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                    alias.asname is None and (dotted_name(alias.name) or "").split(".")[0] == "torch" for alias in small.names
                ):
                    return True
    return False


def _first_import(module: cst.Module) -> cst.CSTNode | None:
    """The first module-level import that `import torch` may go before (not a `__future__` one)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], (cst.Import, cst.ImportFrom)):
            first = statement.body[0]
            if isinstance(first, cst.ImportFrom) and first.module is not None and dotted_name(first.module) == "__future__":
                continue
            return statement
    return None



def replace_node(node: cst.CSTNode, code: str, message: str, applicability: Applicability) -> FixPlan:
    """``node``'s code replaced with ``code``."""
    return FixPlan(message, applicability, (NodeEdit(node, code.replace("{", "{{").replace("}", "}}")),))


def _assigned(block: cst.BaseSuite) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) of a block that is one `name = value` and nothing else."""
    if not isinstance(block, cst.IndentedBlock) or len(block.body) != 1:
        return None
    line = block.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    assign = line.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return None
    return assign.targets[0].target.value, assign.value


def where_for_if(statement: cst.If, module: cst.Module, bound: set[str], takes) -> FixPlan | None:
    """`if c: y = a` (`else: y = b`) -> `y = torch.where(c, a, b)`, the else side being `y`'s
    value before the `if` where there is none. Unsafe: both sides are computed (a NaN or an
    error on the side not taken now happens, and reaches the gradient), and the result takes
    the broadcast shape and promoted dtype of both. None unless each branch is one assignment
    to the same name of a value ``takes`` accepts (a tensor that only computes), the name is
    bound before (``bound``), nothing but the branches' code is lost (no comments), and
    `torch` is imported."""
    taken = _assigned(statement.body)
    if taken is None:
        return None
    name, value = taken
    orelse = statement.orelse
    if orelse is None:
        if name not in bound or not takes(cst.Name(name)):
            return None
        other: str = name
    elif isinstance(orelse, cst.Else) and (other_side := _assigned(orelse.body)) is not None and other_side[0] == name:
        if not takes(other_side[1]):
            return None
        other = module.code_for_node(other_side[1])
    else:
        return None
    code = module.code_for_node(statement)
    if not takes(value) or "#" in code or not binds_torch(module):
        return None
    test = module.code_for_node(statement.test)
    rewritten = f"{name} = torch.where({test}, {module.code_for_node(value)}, {other})"
    return replace_node(statement, rewritten, "Pick with `torch.where`", Applicability.UNSAFE)


def where_for_ternary(node: cst.IfExp, module: cst.Module, takes) -> FixPlan | None:
    """`a if c else b` -> `torch.where(c, a, b)`; unsafe for the reasons `where_for_if` gives."""
    if not (takes(node.body) and takes(node.orelse)) or not binds_torch(module):
        return None
    parts = [module.code_for_node(part) for part in (node.test, node.body, node.orelse)]
    if any("#" in part for part in parts):
        return None
    return replace_node(node, f"torch.where({', '.join(parts)})", "Pick with `torch.where`", Applicability.UNSAFE)
