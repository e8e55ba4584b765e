from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._dynamic_shapes import CAPTURE_HINT
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import where_fill
from torchlint.analysis.kind_vocabulary import Kind


class BooleanMaskIndex(Rule):
    code = "TL403"
    name = "boolean-mask-index"
    message = "reading `x[mask]` with a boolean tensor gives a data-dependent size, which breaks the graph"
    suggestion = f"keep the shape: `torch.where(mask, x, 0)` (writing `x[mask] = v` is fine), {CAPTURE_HINT}"
    fixes = (Applicability.SAFE, Applicability.DISPLAY_ONLY)
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Assign(self, node: cst.Assign, ctx: RuleContext) -> None:
        for target in node.targets:
            ctx.handled.add(id(target.target))  # a masked write keeps the shape
        # `x[mask] += v` is not exempt: it reads `x[mask]` before writing it back.

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        if ctx.dynamic_shapes_captured or id(node) in ctx.handled:
            return
        # A mask index is evidence enough that the value is a tensor, unless it is known not to be.
        if ctx.kind_of(node.value) in (Kind.PYTHON, Kind.SIZE, Kind.META, Kind.MODULE):
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and ctx.kinds.is_mask(element.slice.value):
                only = len(node.slice) == 1
                fix = where_fill(node, node.value, element.slice.value, ctx, broadcasts=False) if only else None
                ctx.report(type(self), node, fix=fix)
                return

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                loss = (self.proj(x) - x) ** 2
                observed = ~torch.isnan(x)
                return loss[observed].mean()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            positive = x[x > 0]
            return positive.sum()
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
                loss = (self.proj(x) - x) ** 2
                observed = ~torch.isnan(x)
                return torch.where(observed, loss, 0.0).sum() / observed.sum()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            y[y < 0] = 0
            return y.masked_fill(y > 1, 1.0)
        """,
    )
