from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._data_dependent import constant_message, truthiness_sites
from torchlint.rules._side_effects import eager_only
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class AssertTensorWithMessage(Rule):
    code = "TL204"
    name = "assert-tensor-with-message"
    message = (
        "`assert` on a tensor with a formatted message breaks the graph "
        "(a plain `assert` or a constant message traces)"
    )
    suggestion = "check on the device: `torch._assert_async(cond, \"message\")`, or give the assert a constant message"
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0170",)
    gb_types = ("Data-dependent branching",)

    def visit_Assert(self, node: cst.Assert, ctx: RuleContext) -> None:
        if node.msg is None or constant_message(node.msg):
            return
        for site in truthiness_sites(node.test, ctx):
            ctx.report(type(self), site, self.message, fix=eager_only(node, ctx))
            return

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = torch.relu(self.proj(x))
                assert torch.isfinite(y).all(), f"non-finite activations for input {tuple(x.shape)}"
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            assert x.sum() > -100, f"sum too small: {x.sum()}"
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
                y = torch.relu(self.proj(x))
                assert torch.isfinite(y).all(), "non-finite activations"
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            assert x.shape[-1] == 8, f"width {x.shape[-1]}, expected 8"
            assert (x > -100).all()
            return x * 2
        """,
    )
