from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import scalar_kept

_CONVERSIONS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex"})


class PythonScalarOfTensor(Rule):
    code = "TL303"
    name = "python-scalar-of-tensor"
    message = "converting a tensor to a Python number reads its value, which breaks the graph"
    suggestion = "keep it a tensor (`y * t.argmax()` rather than `y * int(t.argmax())`), or set `capture_scalar_outputs`"
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0124",)
    gb_types = ("Unsupported Tensor.item() call with capture_scalar_outputs=False",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.scalars_captured or len(node.args) != 1:
            return
        name = ctx.qualified_name(node.func)
        if name in _CONVERSIONS and ctx.is_tensor(node.args[0].value):
            short = name.split(".")[-1]
            message = f"`{short}()` of a tensor reads its value into Python, which breaks the graph"
            ctx.report(type(self), node, message, fix=scalar_kept(node, short, ctx))

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                norm = float(y.norm())
                return y / max(norm, 1e-6)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            n = int(x.argmax())
            positive = bool(x.sum() > 0)
            return x * n * positive
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
                norm = y.norm().detach()
                return y / norm.clamp_min(1e-6)
        """,
        """
        import os

        import torch


        @torch.compile
        def step(x: torch.Tensor, steps: int = 2):
            scale = float(os.getenv("MODEL_SCALE", "1.0"))
            width = int(x.shape[-1])
            return x * scale * int(steps) / width
        """,
    )
