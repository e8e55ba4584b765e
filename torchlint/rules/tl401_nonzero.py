from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._dynamic_shapes import CAPTURE_HINT, report_dynamic_op
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import rows_counted

_OPS = frozenset({"nonzero", "argwhere"})


class Nonzero(Rule):
    code = "TL401"
    name = "nonzero"
    message = "`nonzero()` has an output size that depends on the data, which breaks the graph"
    suggestion = f"keep a fixed shape: a mask with `torch.where(mask, x, 0)`, `count_nonzero`, {CAPTURE_HINT}"
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        report_dynamic_op(type(self), node, _OPS, ctx, rows_counted)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                h = torch.relu(self.proj(x))
                active = torch.nonzero(h)
                return h.sum() / active.shape[0]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            n = x.nonzero().shape[0]
            return x * n
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
                h = torch.relu(self.proj(x))
                return h.sum() / torch.count_nonzero(h)
        """,
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.capture_dynamic_output_shape_ops = True


        @torch.compile
        def step(x: torch.Tensor):
            return torch.nonzero(x > 0)
        """,
        """
        import torch


        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            return torch.nonzero(x > 0)
        """,
    )
