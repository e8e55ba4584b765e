from __future__ import annotations

import libcst as cst

from torchlint.rules._dynamic_shapes import CAPTURE_HINT
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class WhereOneArgument(Rule):
    code = "TL402"
    name = "where-one-argument"
    message = "`torch.where(cond)` with one argument is `nonzero`: its output size depends on the data"
    suggestion = f"use the three-argument form `torch.where(cond, x, y)` or a mask, {CAPTURE_HINT}"
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.dynamic_shapes_captured or len(node.args) != 1 or node.args[0].star:
            return
        if ctx.qualified_name(node.func) == "torch.where":
            ctx.report(type(self), node)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                h = self.proj(x)
                keep = h.norm(dim=-1) > 1.0
                (rows,) = torch.where(keep)
                return h[rows].sum(dim=0)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            rows, cols = torch.where(x > 0)
            return rows + cols
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
                h = self.proj(x)
                keep = h.norm(dim=-1) > 1.0
                return torch.where(keep.unsqueeze(-1), h, 0.0).sum(dim=0)
        """,
        """
        import torch


        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            rows, cols = torch.where(x > 0)
            return rows + cols
        """,
    )
