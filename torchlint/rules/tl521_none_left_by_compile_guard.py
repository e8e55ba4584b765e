from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.summary import FunctionInfo


def _none_checks(test: cst.BaseExpression) -> set[str]:
    """The names an `and` chain requires to be None: `mask is None and not is_compiling()`."""
    if isinstance(test, cst.BooleanOperation):
        if not isinstance(test.operator, cst.And):
            return set()
        return _none_checks(test.left) | _none_checks(test.right)
    if (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return {test.left.value}
    return set()


def _assigned_in(body: cst.BaseSuite) -> set[str]:
    found = set()

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name):
            found.add(node.target.value)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.value is not None:
            found.add(node.target.value)

    walk(body, visit)
    return found


def _names_in(node: cst.CSTNode) -> set[str]:
    found = set()
    walk(node, lambda child: found.add(child.value) if isinstance(child, cst.Name) else None)
    return found


def _nodes_in(node: cst.CSTNode) -> set[int]:
    found = set()
    walk(node, lambda child: found.add(id(child)))
    return found


# What Dynamo does with the error, as measured on torch 2.13.
_FALLS_BACK = "Dynamo runs the whole function eagerly"
_FAILS = "the compiled call fails with the error"


class NoneLeftByCompileGuard(Rule):
    code = "TL521"
    name = "none-left-by-compile-guard"
    message = (
        "a value an `is_compiling()` guard leaves None while compiling is used as an object: "
        "the trace raises, and the whole function runs eagerly or the compiled call fails"
    )
    suggestion = (
        "fill the default on every path (drop `not is_compiling()` from the guard), or check "
        "`is not None` before using it"
    )
    # The TypeError or AttributeError raised while tracing has no handler in the frame.
    gb_ids = ("GB0088",)
    gb_types = ("Observed exception",)

    def __init__(self) -> None:
        self._function: FunctionInfo | None = None
        # name -> the guard that skips its default while compiling
        self._left_none: dict[str, cst.If] = {}
        # the nodes of those guards' tests, which are no later check of the name
        self._guard_parts: set[int] = set()

    def _tracked(self, ctx: RuleContext) -> dict[str, cst.If]:
        if ctx.function is not self._function:
            self._function = ctx.function
            self._left_none = {}
            self._guard_parts = set()
        return self._left_none

    def start_file(self, ctx: RuleContext) -> None:
        self._function = None
        self._left_none = {}
        self._guard_parts = set()

    def visit_If(self, node: cst.If, ctx: RuleContext) -> None:
        tracked = self._tracked(ctx)
        for name in _names_in(node.test):
            tracked.pop(name, None)  # a test that looks at the name may well narrow it
        if ctx.guards.when_compiling(node.test, ctx.scope) is not False:
            return
        left_none = _none_checks(node.test) & _assigned_in(node.body)
        for name in left_none:
            tracked[name] = node
        if left_none:
            self._guard_parts |= _nodes_in(node.test)

    def visit_IfExp(self, node: cst.IfExp, ctx: RuleContext) -> None:
        self._forget(_names_in(node.test), ctx)

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx: RuleContext) -> None:
        if id(node) not in self._guard_parts:
            self._forget(_names_in(node.left), ctx)

    def visit_While(self, node: cst.While, ctx: RuleContext) -> None:
        self._forget(_names_in(node.test), ctx)

    def visit_AssignTarget(self, node: cst.AssignTarget, ctx: RuleContext) -> None:
        self._forget(_names_in(node.target), ctx)

    def _forget(self, names: set[str], ctx: RuleContext) -> None:
        tracked = self._tracked(ctx)
        for name in names:
            tracked.pop(name, None)

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        self._used(node.value, node, "indexing", _FALLS_BACK, ctx)

    def visit_Attribute(self, node: cst.Attribute, ctx: RuleContext) -> None:
        self._used(node.value, node, f"reading `.{node.attr.value}` of", _FALLS_BACK, ctx)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        self._used(node.func, node, "calling", _FAILS, ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx: RuleContext) -> None:
        for side in (node.left, node.right):
            self._used(side, node, "arithmetic on", _FAILS, ctx)

    def _used(self, value: cst.BaseExpression, node: cst.CSTNode, how: str, outcome: str, ctx: RuleContext) -> None:
        if not isinstance(value, cst.Name):
            return
        guard = self._tracked(ctx).pop(value.value, None)
        if guard is None:
            return
        ctx.report(
            type(self),
            node,
            f"`{value.value}` is still None here while compiling when the caller passes none: the "
            f"`is_compiling()` guard above skips its default, so {how} it raises inside the trace "
            f"and {outcome}",
        )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
                if mask is None and not torch.compiler.is_compiling():
                    mask = torch.ones(x.shape[0], device=x.device)
                return self.proj(x) * mask[:, None]
        """,
        """
        import torch
        import torch._dynamo


        @torch.compile
        def step(x: torch.Tensor, bias: torch.Tensor | None = None):
            if not torch._dynamo.is_compiling() and bias is None:
                bias = torch.zeros(x.shape[-1])
            return x + bias
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
                if mask is None:
                    return self.proj(x)
                return self.proj(x) * mask[:, None]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, mask: torch.Tensor | None = None):
            if mask is None and not torch.compiler.is_compiling():
                mask = torch.ones(x.shape[0])
            if mask is not None:
                x = x * mask[:, None]
            return x
        """,
    )
