from __future__ import annotations

import libcst as cst

from torchlint.rules._data_dependent import mark_condition, raises_only, truthiness_sites
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_WHERE = (
    "compute both sides and pick with `torch.where(cond, a, b)`, or use "
    "`torch.cond(cond, true_fn, false_fn, (x,))` when both branches are pure functions "
    "that return tensors of the same structure"
)
_ASSERT = "check on the device instead: `torch._assert_async(~cond, \"message\")`"
_WHILE = "use `torch.while_loop(cond_fn, body_fn, (x,))`, or a fixed number of steps with a mask"
_LOGICAL = "keep it a tensor: `a & b`, `a | b`, `~a` (or `torch.logical_and/or/not`)"


class TensorCondition(Rule):
    code = "TL201"
    name = "tensor-condition"
    message = "branching on a tensor's value breaks the graph (Dynamo cannot know which way it goes)"
    suggestion = _WHERE
    gb_ids = ("GB0170",)
    gb_types = ("Data-dependent branching",)

    def _report(self, condition: cst.BaseExpression, what: str, suggestion: str, ctx: RuleContext) -> None:
        mark_condition(condition, ctx)
        for site in truthiness_sites(condition, ctx):
            value = "a tensor value" if ctx.is_tensor(site) else "a number captured from a tensor's data"
            message = f"{what} on {value} breaks the graph (Dynamo cannot know which way it goes)"
            ctx.report(type(self), site, message, suggestion)

    def visit_If(self, node: cst.If, ctx: RuleContext) -> None:
        self._report(node.test, "`if`", _ASSERT if raises_only(node.body) else _WHERE, ctx)

    def visit_While(self, node: cst.While, ctx: RuleContext) -> None:
        self._report(node.test, "`while`", _WHILE, ctx)

    def visit_IfExp(self, node: cst.IfExp, ctx: RuleContext) -> None:
        self._report(node.test, "a conditional expression", "`torch.where(cond, a, b)`", ctx)

    def visit_Assert(self, node: cst.Assert, ctx: RuleContext) -> None:
        # A plain `assert` on a tensor traces; TL204 handles one with a formatted message.
        mark_condition(node.test, ctx)

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx: RuleContext) -> None:
        if id(node) in ctx.handled:
            return
        mark_condition(node, ctx)
        # `a and b` asks for the truth of `a`; `b` is only handed back.
        for site in truthiness_sites(node.left, ctx):
            message = "`and`/`or` on a tensor value breaks the graph (Python asks for its truth value)"
            ctx.report(type(self), site, message, _LOGICAL)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx: RuleContext) -> None:
        if id(node) in ctx.handled or not isinstance(node.operator, cst.Not):
            return
        mark_condition(node, ctx)
        for site in truthiness_sites(node.expression, ctx):
            message = "`not` on a tensor value breaks the graph (Python asks for its truth value)"
            ctx.report(type(self), site, message, _LOGICAL)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                if y.abs().max() > 1.0:
                    y = y / y.abs().max()
                return torch.tanh(y)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x.abs() + 0.1
            while y.sum() < 100:
                y = y * 2
            return y
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            a, b = x.chunk(2, dim=-1)
            z = a if a.mean() > 0 else -a
            ok = (a.sum() > 0) and (b.mean() < 10)
            return z * ok
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                peak = y.abs().max()
                y = torch.where(peak > 1.0, y / peak, y)
                return torch.tanh(y)
        """,
        """
        import torch
        import torch.nn.functional as F


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
                if x.shape[0] > 2 and x.dtype == torch.float32:
                    x = x * 2
                y = self.proj(x)
                if self.training:
                    y = F.dropout(y, 0.1)
                if mask is not None:
                    y = y * mask
                return y
        """,
    )
