from __future__ import annotations

import libcst as cst

from torchlint.rules._dynamic_shapes import CAPTURE_HINT, calls_op
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_OPS = frozenset({"masked_select"})


class MaskedSelect(Rule):
    code = "TL405"
    name = "masked-select"
    message = "`masked_select()` has an output size that depends on the data, which breaks the graph"
    suggestion = f"keep the shape: `torch.where(mask, x, 0)` or `(x * mask).sum()`, {CAPTURE_HINT}"
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if calls_op(node, _OPS, ctx):
            ctx.report(type(self), node)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                logits = self.proj(x)
                confident = logits.softmax(dim=-1) > 0.15
                return torch.masked_select(logits, confident).sum()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x.masked_select(x > 0).sum()
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
                logits = self.proj(x)
                confident = logits.softmax(dim=-1) > 0.15
                return (logits * confident).sum()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x.masked_fill(x < 0, 0.0)
            return torch.where(y > 1, y, 1.0)
        """,
    )
