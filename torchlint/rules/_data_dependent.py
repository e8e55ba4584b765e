"""What the data-dependent rules share: where a tensor's truth value is asked for."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.rules.context import RuleContext


def truthiness_sites(condition: cst.BaseExpression, ctx: RuleContext) -> Iterator[cst.BaseExpression]:
    """The tensor-valued parts of a condition whose truth value Python needs.

    `if a and t.any():` asks for the truth of `a` and of `t.any()`; `not t` for `t`.
    """
    if isinstance(condition, cst.BooleanOperation):
        yield from truthiness_sites(condition.left, ctx)
        if not ctx.short_circuits(condition):
            yield from truthiness_sites(condition.right, ctx)
    elif isinstance(condition, cst.UnaryOperation) and isinstance(condition.operator, cst.Not):
        yield from truthiness_sites(condition.expression, ctx)
    elif ctx.is_data_dependent(condition):
        yield condition


def mark_condition(condition: cst.BaseExpression, ctx: RuleContext) -> None:
    """Boolean operators inside a condition are reported with the condition, not again."""

    def visit(node: cst.CSTNode) -> bool | None:
        if isinstance(node, (cst.BooleanOperation, cst.UnaryOperation)):
            ctx.handled.add(id(node))
        return None

    walk(condition, visit)


def raises_only(body: cst.BaseSuite) -> bool:
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
        if any(isinstance(small, cst.Raise) for small in smalls):
            return True
    return False


def constant_message(message: cst.BaseExpression) -> bool:
    """A message Python compiles to a constant: Dynamo then keeps an assert in the graph."""
    if isinstance(message, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(message, cst.FormattedString):
        # `f"text"` with no `{...}` is a constant; `f"{x}"` is built at run time.
        return not any(isinstance(part, cst.FormattedStringExpression) for part in message.parts)
    if isinstance(message, cst.ConcatenatedString):
        return constant_message(message.left) and constant_message(message.right)
    return False
