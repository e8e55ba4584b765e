from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._dynamic_shapes import CAPTURE_HINT, calls_op
from torchlint.rules.base import Rule
from torchlint.rules.fixes import FixPlan
from torchlint.rules._tensor_methods import positional
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import where_fill

_OPS = frozenset({"masked_select"})


def _kept_in_shape(node: cst.Call, ctx: RuleContext) -> FixPlan | None:
    """`torch.masked_select(x, mask)` or `x.masked_select(mask)` as `torch.where(mask, x, 0)`."""
    args = [arg.value for arg in positional(node)]
    if len(args) != len(node.args):
        return None  # keywords or unpacking: the parts are not where they are looked for
    if ctx.qualified_name(node.func) is None and isinstance(node.func, cst.Attribute) and len(args) == 1:
        values, mask = node.func.value, args[0]
    elif ctx.qualified_name(node.func) is not None and len(args) == 2:
        values, mask = args
    else:
        return None
    return where_fill(node, values, mask, ctx, broadcasts=True)


class MaskedSelect(Rule):
    code = "TL405"
    name = "masked-select"
    message = "`masked_select()` has an output size that depends on the data, which breaks the graph"
    suggestion = f"keep the shape: `torch.where(mask, x, 0)` or `(x * mask).sum()`, {CAPTURE_HINT}"
    fixes = (Applicability.SAFE, Applicability.DISPLAY_ONLY)
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if calls_op(node, _OPS, ctx):
            ctx.report(type(self), node, fix=_kept_in_shape(node, ctx))

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
