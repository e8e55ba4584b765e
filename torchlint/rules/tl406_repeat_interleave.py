from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._dynamic_shapes import CAPTURE_HINT, calls_op
from torchlint.rules._tensor_methods import keyword, positional
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import repeat_interleave_size

_OPS = frozenset({"repeat_interleave"})


class RepeatInterleaveWithoutOutputSize(Rule):
    code = "TL406"
    name = "repeat-interleave-without-output-size"
    message = "`repeat_interleave()` with tensor repeats and no `output_size` has a data-dependent size, which breaks the graph"
    suggestion = f"pass `output_size=` (the known total), {CAPTURE_HINT}"
    fixes = (Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY)
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if keyword(node, "output_size") is not None or not calls_op(node, _OPS, ctx):
            return
        args = positional(node)
        is_method = ctx.qualified_name(node.func) is None
        # torch.repeat_interleave(x, repeats) / x.repeat_interleave(repeats) / torch.repeat_interleave(repeats)
        repeats = keyword(node, "repeats")
        if repeats is not None:
            value = repeats.value
        elif is_method:
            value = args[0].value if args else None
        else:
            value = args[1].value if len(args) > 1 else (args[0].value if args else None)
        if value is not None and ctx.is_tensor(value):
            ctx.report(type(self), node, fix=repeat_interleave_size(node, value, ctx))

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.group_scale = torch.nn.Parameter(torch.randn(4))
                self.register_buffer("group_size", torch.tensor([1, 3, 2, 2]))

            def forward(self, x):
                h = self.proj(x)
                scale = torch.repeat_interleave(self.group_scale, self.group_size)
                return h * scale
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            r = (x > 0).sum(dim=-1)
            return torch.repeat_interleave(x, r, dim=0) * 2
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.group_scale = torch.nn.Parameter(torch.randn(4))
                self.register_buffer("group_size", torch.tensor([1, 3, 2, 2]))

            def forward(self, x):
                h = self.proj(x)
                scale = torch.repeat_interleave(self.group_scale, self.group_size, output_size=h.shape[-1])
                return h * scale
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return torch.repeat_interleave(x, 2, dim=0)
        """,
    )
