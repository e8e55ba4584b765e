from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_values import autograd_ops_traced
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

_AUTOGRAD_BACKWARD = "torch.autograd.backward"
_REMEDY = "return the loss and call `.backward()` on it outside the compiled function"


class BackwardInCompiledCode(Rule):
    code = "TL509"
    name = "backward-in-compiled-code"
    message = f"`.backward()` in compiled code breaks the graph; {_REMEDY}"
    suggestion = (
        "let the compiled function return the loss (`return loss`) and run `loss.backward()` and "
        "the optimizer step in the eager training loop: the backward still runs compiled"
    )
    # `t.backward()` breaks only while `trace_autograd_ops` is off (GB0123);
    # `torch.autograd.backward()` is a skipped function whatever the setting (GB0007).
    gb_ids = ("GB0123", "GB0007")
    gb_types = ("Unsupported Tensor.backward() call", "Attempted to call function marked as skipped")

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        if ctx.qualified_name(func) == _AUTOGRAD_BACKWARD:
            ctx.report(
                type(self),
                node,
                "`torch.autograd.backward()` in compiled code breaks the graph (Dynamo skips it); " + _REMEDY,
            )
        elif (
            isinstance(func, cst.Attribute)
            and func.attr.value == "backward"
            and ctx.kind_of(func.value) is Kind.TENSOR
            and not autograd_ops_traced(ctx)
        ):
            ctx.report(
                type(self),
                node,
                "`.backward()` on a tensor in compiled code breaks the graph (Dynamo does not trace it "
                f"while `trace_autograd_ops` is off); {_REMEDY}",
            )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                loss = self.proj(x).pow(2).mean()
                loss.backward()
                return loss.detach()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            loss = x.pow(2).sum()
            torch.autograd.backward([loss])
            return loss.detach()
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
                return self.proj(x).pow(2).mean()


        def train_step(model, optimizer, x):
            loss = model(x)
            loss.backward()
            optimizer.step()
            return loss.detach()
        """,
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                if y.requires_grad:
                    y.register_hook(lambda g: g * 0.5)
                return y
        """,
    )
