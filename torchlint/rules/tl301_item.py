from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._tensor_methods import tensor_method
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import item_kept

_ITEM = frozenset({"item"})


class TensorItem(Rule):
    code = "TL301"
    name = "tensor-item"
    message = "`.item()` reads a tensor's value into Python, which breaks the graph"
    suggestion = (
        "keep it a 0-d tensor (`y * t.sum()` rather than `y * t.sum().item()`), or set "
        "`torch._dynamo.config.capture_scalar_outputs = True`"
    )
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0124",)
    gb_types = ("Unsupported Tensor.item() call with capture_scalar_outputs=False",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if not ctx.scalars_captured and tensor_method(node, _ITEM, ctx):
            ctx.report(type(self), node, fix=item_kept(node, ctx))

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                scale = y.abs().amax().item()
                return y / (scale + 1e-6)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            sums = [row.sum().item() for row in x]
            return x * len(sums)
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
                scale = y.abs().amax().detach()
                return y / (scale + 1e-6)
        """,
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.capture_scalar_outputs = True


        @torch.compile
        def step(x: torch.Tensor):
            return x * x.sum().item()
        """,
        """
        import torch


        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            s = x.sum().item()
            return x * s
        """,
    )
