"""What code does between calls of compiled code: the statements that rebind a value, and
whether they run again and again in a loop.

The recompile rules whose cause is a mutation (TL701's `model.epoch = epoch`, TL702's
`global STEP`) look here, only in files that hold a candidate (a class that starts an
attribute as an int, a global int). The statements come from `_setup_code.ScopeOrder`, the
statement order the setup rules use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.scopes import Scope
from torchlint.analysis.summary import FileSummary, FunctionInfo
from torchlint.parse.cst_walk import walk
from torchlint.rules._setup_code import ScopeOrders
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding


@dataclass(frozen=True)
class Statement:
    node: cst.BaseSmallStatement
    # Inside a `for` or `while` of its scope: it runs again and again.
    in_loop: bool


def small_statements(summary: FileSummary) -> Iterator[tuple[FunctionInfo | None, Scope, Statement]]:
    """The simple statements of the module and of each function, in order, with the function
    and scope they are in."""
    orders = ScopeOrders(summary)
    scopes: list[tuple[FunctionInfo | None, Scope]] = [(None, summary.scope)]
    scopes += [(function, function.scope) for function in summary.functions if function.lambda_node is None]
    for function, scope in scopes:
        for statement, _, loops in orders.of(function).entries:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    yield function, scope, Statement(small, bool(loops))


def is_int_literal(node: cst.BaseExpression | None) -> bool:
    """`0`, `-1`: how an int counter starts."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def reads(
    rule: type[Rule],
    functions: Iterable[FunctionInfo],
    shown: Callable[[FunctionInfo], str],
    is_read: Callable[[cst.CSTNode, FunctionInfo], bool],
    skipped: Callable[[cst.CSTNode], bool],
) -> list[Finding]:
    """Where ``functions`` read the value (``is_read``), as places a finding points at
    ("`<shown(f)>` is read here, in `f`"); a node ``skipped`` says is not looked into."""
    found: list[Finding] = []
    for function in functions:

        def visit(node: cst.CSTNode, function: FunctionInfo = function) -> bool | None:
            if skipped(node):
                return True
            if is_read(node, function):
                message = f"`{shown(function)}` is read here, in `{function.qualname}`"
                found.append(Finding(rule, node, node, message, None, function=function))
                return True
            return None

        walk(function.node.body, visit)
    return found
