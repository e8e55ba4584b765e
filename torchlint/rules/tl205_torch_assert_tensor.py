from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class TorchAssertOnTensor(Rule):
    code = "TL205"
    name = "torch-assert-on-tensor"
    message = "`torch._assert()` on a tensor condition reads the data, which breaks the graph"
    suggestion = "check on the device: `torch._assert_async(cond, \"message\")`"
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) != "torch._assert" or not node.args:
            return
        if ctx.is_tensor(node.args[0].value):
            ctx.report(type(self), node, self.message)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                probs = self.proj(x).softmax(dim=-1)
                torch._assert((probs >= 0).all(), "softmax gave a negative probability")
                return probs.log()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            torch._assert(x.sum() > -100, "sum too small")
            return x * 2
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
                probs = self.proj(x).softmax(dim=-1)
                torch._assert_async((probs >= 0).all(), "softmax gave a negative probability")
                return probs.log()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, y: torch.Tensor):
            torch._check(y.shape[0] == x.shape[0])
            return x + y
        """,
    )
