"""What code outside compiled functions does between calls: the statements that rebind a
value, and whether they run in a loop.

The recompile rules whose cause is a mutation (TL701's `model.epoch = epoch`, TL702's
`global STEP`) look here, only in files that hold a candidate (a class that starts an
attribute as an int, a global int), and walk statements only, never expressions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.scopes import Scope
from torchlint.analysis.summary import FileSummary, FunctionInfo

@dataclass(frozen=True)
class Statement:
    node: cst.BaseSmallStatement
    # Inside a `for` or `while` of its scope: it runs again and again.
    in_loop: bool


def small_statements(body: cst.BaseSuite | cst.Module, in_loop: bool = False) -> Iterator[Statement]:
    """The simple statements of a body in order, into compound statements but not into the
    functions and classes defined there (each is a scope of its own)."""
    pending: list[tuple[cst.CSTNode, bool]] = [(body, in_loop)]
    while pending:
        node, looping = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.SimpleStatementLine):
            yield from (Statement(small, looping) for small in node.body)
            continue
        if isinstance(node, cst.SimpleStatementSuite):
            yield from (Statement(small, looping) for small in node.body)
            continue
        looping = looping or isinstance(node, (cst.For, cst.While))
        children: list[cst.CSTNode] = []
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            children = list(node.body)
        else:
            for name in ("body", "orelse", "handlers", "finalbody"):
                child = getattr(node, name, None)
                if isinstance(child, (list, tuple)):
                    children.extend(child)
                elif isinstance(child, cst.CSTNode):
                    children.append(child)
        pending.extend((child, looping) for child in reversed(children))


def scope_bodies(summary: FileSummary) -> Iterator[tuple[FunctionInfo | None, Scope, cst.BaseSuite | cst.Module]]:
    """The module and each function, with its scope and body."""
    yield None, summary.scope, summary.module
    for function in summary.functions:
        if function.lambda_node is None:
            yield function, function.scope, function.node.body


def is_int_literal(node: cst.BaseExpression | None) -> bool:
    """`0`, `-1`: how an int counter starts."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)
