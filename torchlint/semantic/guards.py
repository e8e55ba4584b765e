"""`is_compiling()` guards: code Dynamo does not trace because of them.

A test is evaluated as Dynamo sees it while compiling: the guard calls are True, `not`,
`and` and `or` combine as usual, anything else is unknown. The branch such a test rules
out is never traced, and neither is the rest of a block after a branch that always
returns while compiling (`if is_compiling(): return x`).
"""

from __future__ import annotations

import libcst as cst

from torchlint.semantic.scopes import Scope, assigned_value, qualified_name

GUARD_FUNCTIONS = frozenset(
    {
        "torch.compiler.is_compiling",
        "torch.compiler.is_dynamo_compiling",
        "torch._dynamo.is_compiling",
        "torch._dynamo.external_utils.is_compiling",
        "torch._utils.is_compiling",
    }
)
# Helpers other libraries export under these names (transformers, accelerate, ...).
GUARD_NAMES = frozenset({"is_torchdynamo_compiling", "is_dynamo_compiling"})


# What a name holding a guard's value may have been assigned from (names are followed by
# `assigned_value` itself, which bounds alias chains).
_GUARD_SHAPES = (cst.Call, cst.BooleanOperation, cst.UnaryOperation)
_MAX_DEPTH = 16


class GuardEvaluator:
    def __init__(self, extra_guards: tuple[str, ...] = ()) -> None:
        self.qualified = GUARD_FUNCTIONS | {g for g in extra_guards if "." in g}
        self.bare = GUARD_NAMES | {g for g in extra_guards if "." not in g}

    def is_guard_call(self, node: cst.BaseExpression, scope: Scope) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = qualified_name(node.func, scope)
        if name is None:
            return False
        return name in self.qualified or name.rsplit(".", 1)[-1] in self.bare

    def when_compiling(self, test: cst.BaseExpression, scope: Scope, _depth: int = 0) -> bool | None:
        """The value of ``test`` while Dynamo traces, where the guards decide it."""
        if _depth > _MAX_DEPTH:
            return None  # `flag = flag or other`: give up rather than chase the name
        if self.is_guard_call(test, scope):
            return True
        if isinstance(test, cst.Name):
            # `is_tracing = torch.jit.is_tracing() or is_torchdynamo_compiling()`
            value = assigned_value(test, scope)
            return self.when_compiling(value, scope, _depth + 1) if isinstance(value, _GUARD_SHAPES) else None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.when_compiling(test.expression, scope, _depth + 1)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left = self.when_compiling(test.left, scope, _depth + 1)
            right = self.when_compiling(test.right, scope, _depth + 1)
            if isinstance(test.operator, cst.And):
                if left is False or right is False:
                    return False
                return True if left and right else None
            if left is True or right is True:
                return True
            return False if left is False and right is False else None
        return None


def always_exits(body: cst.BaseSuite) -> bool:
    """Whether a block ends in `return` or `raise` on every path through its last statement."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    if isinstance(last, cst.SimpleStatementSuite):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    if isinstance(last, cst.If) and last.orelse is not None:
        orelse = last.orelse
        other = orelse.body if isinstance(orelse, cst.Else) else None
        if isinstance(orelse, cst.If):
            return always_exits(last.body) and always_exits(cst.IndentedBlock(body=[orelse]))
        return always_exits(last.body) and other is not None and always_exits(other)
    return False
