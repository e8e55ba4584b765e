from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class TorchEqual(Rule):
    code = "TL202"
    name = "torch-equal"
    message = "`torch.equal()` / `torch.allclose()` return a Python bool read from the data, which breaks the graph"
    suggestion = "keep it a tensor: `(a == b).all()`, and choose with `torch.where` rather than `if`"
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if name in ("torch.equal", "torch.allclose"):
            message = f"`{name}()` returns a Python bool read from the data, which breaks the graph"
            ctx.report(type(self), node, message)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scores = torch.nn.Linear(8, 8)

            def forward(self, x):
                logits = self.scores(x)
                keep = x > -3.0
                if torch.equal(keep, torch.ones_like(keep)):
                    return logits.softmax(dim=-1)
                return logits.masked_fill(~keep, float("-inf")).softmax(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            a, b = x.chunk(2, dim=-1)
            if torch.equal(a, b):
                return a
            return a - b
        """,
    )

    valid = (
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            a, b = x.chunk(2, dim=-1)
            return torch.where((a == b).all(), a, a - b)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x * 2


        def test_step_is_deterministic():
            x = torch.randn(4, 8)
            assert torch.equal(step(x), step(x))
        """,
    )
