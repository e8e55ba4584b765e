from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class InputInCompiledCode(Rule):
    code = "TL105"
    name = "input-in-compiled-code"
    message = (
        "`input()` in compiled code breaks the graph (Dynamo cannot trace the builtin); "
        "read the value before calling the compiled function and pass it in"
    )
    suggestion = "read the input outside the compiled function and pass the value as an argument"
    gb_ids = ("GB0059",)
    gb_types = ("Failed to trace builtin operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) == "builtins.input":
            ctx.report(type(self), node)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                temperature = float(input("temperature? "))
                return torch.softmax(self.proj(x) / temperature, dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            s = input("scale? ")
            return x * float(s)
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.temperature = float(input("temperature? "))

            def forward(self, x):
                return torch.softmax(self.proj(x) / self.temperature, dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, scale: float):
            return x * scale


        def main(x):
            return step(x, float(input("scale? ")))
        """,
    )
