"""What the side-effect rules (TL1xx) share: how they name a call and the guard rewrite."""

from __future__ import annotations

import libcst as cst

from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, guard_statement
from torchlint.analysis.scopes import dotted_name

GUARD_SUGGESTION = (
    "run it only in eager mode: `if not torch.compiler.is_compiling(): {call}(...)`, "
    "or move it out of the compiled function"
)


def shown_name(call: cst.Call) -> str:
    """How the call is spelled in the source, for messages (`logger.info`, `print`)."""
    return dotted_name(call.func) or "call"


def eager_only(node: cst.Call | cst.Assert, ctx: RuleContext) -> FixPlan | None:
    """The fix that runs a call or an `assert` in eager mode only, where it is a statement of
    its own: a call whose value is used, or a statement that shares its line, has none."""
    statement = ctx.statement
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    small = statement.body[0]
    if not (small is node or (isinstance(small, cst.Expr) and small.value is node)):
        return None
    shown = "`assert`" if isinstance(node, cst.Assert) else f"`{shown_name(node)}()`"
    return guard_statement(statement, ctx.summary.module, f"Run {shown} in eager mode only")
