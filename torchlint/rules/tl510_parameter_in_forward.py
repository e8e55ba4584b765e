from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import shown_name
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_REMEDY = "create it in `__init__` (or use a plain tensor)"


class ParameterInForward(Rule):
    code = "TL510"
    name = "parameter-in-forward"
    message = f"constructing an `nn.Parameter` in compiled code breaks the graph; {_REMEDY}"
    suggestion = (
        "`self.scale = nn.Parameter(torch.ones(dim))` in `__init__`; a lazily sized parameter can be "
        "an `nn.LazyLinear`-style module or a size passed to `__init__`; a constant needs no Parameter"
    )
    gb_ids = ("GB0264",)
    gb_types = ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) in _PARAMETER:
            ctx.report(
                type(self),
                node,
                f"`{shown_name(node)}(...)` in compiled code breaks the graph (Dynamo cannot construct "
                f"a Parameter while tracing); {_REMEDY}",
            )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                gain = torch.nn.Parameter(torch.full((8,), 0.5))
                return self.proj(x) * gain
        """,
        """
        import torch
        from torch import nn


        class LazyScale(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = None

            def forward(self, x):
                if self.weight is None:
                    self.weight = nn.Parameter(torch.ones(x.shape[-1]))
                return x * self.weight
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.gain = torch.nn.Parameter(torch.full((8,), 0.5))

            def forward(self, x):
                return self.proj(x) * self.gain
        """,
        """
        import torch
        from torch import nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                if isinstance(x, torch.Tensor) and not isinstance(x, nn.Parameter):
                    x = x * 2
                return self.proj(x)
        """,
    )
