from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import shown_name
from torchlint.rules._untraceable_values import autograd_ops_traced
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_GRAD = "torch.autograd.grad"


class AutogradGradInCompiledCode(Rule):
    code = "TL508"
    name = "autograd-grad-in-compiled-code"
    message = (
        "`torch.autograd.grad()` in compiled code breaks the graph (Dynamo does not trace it while "
        "`trace_autograd_ops` is off); use `torch.func.grad`, or set "
        "`torch._dynamo.config.trace_autograd_ops = True`"
    )
    suggestion = (
        "`g = torch.func.grad(lambda w: loss_fn(w, x))(weight)` computes the same gradient inside "
        "the graph (and stays differentiable, as with `create_graph=True`); or set "
        "`torch._dynamo.config.trace_autograd_ops = True` before compiling"
    )
    gb_ids = ("GB9186",)
    gb_types = ("using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) != _GRAD or autograd_ops_traced(ctx):
            return
        ctx.report(
            type(self),
            node,
            f"`{shown_name(node)}()` in compiled code breaks the graph (Dynamo does not trace it while "
            "`trace_autograd_ops` is off); use `torch.func.grad`, or set "
            "`torch._dynamo.config.trace_autograd_ops = True`",
        )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                inner_loss = self.proj(x).pow(2).mean()
                (grad,) = torch.autograd.grad(inner_loss, self.proj.weight, create_graph=True)
                fast_weight = self.proj.weight - 0.1 * grad
                return x @ fast_weight.T
        """,
        """
        import torch
        from torch.autograd import grad


        @torch.compile
        def penalty(x: torch.Tensor):
            (g,) = grad(x.pow(2).sum(), x)
            return g
        """,
    )

    valid = (
        """
        import torch
        import torch.nn.functional as F


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                def inner_loss(weight):
                    return F.linear(x, weight, self.proj.bias).pow(2).mean()

                grad = torch.func.grad(inner_loss)(self.proj.weight)
                fast_weight = self.proj.weight - 0.1 * grad
                return x @ fast_weight.T
        """,
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.trace_autograd_ops = True


        @torch.compile
        def penalty(x: torch.Tensor):
            (g,) = torch.autograd.grad(x.pow(2).sum(), x)
            return g
        """,
    )
