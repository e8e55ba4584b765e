from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._side_effects import GUARD_SUGGESTION, eager_only
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class PrintInCompiledCode(Rule):
    code = "TL101"
    name = "print-in-compiled-code"
    message = (
        "`print()` in compiled code breaks the graph (Dynamo cannot trace the builtin); "
        "guard it with `torch.compiler.is_compiling()` or move it out"
    )
    suggestion = GUARD_SUGGESTION.format(call="print")
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0059",)
    gb_types = ("Failed to trace builtin operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        # Under `reorderable_logging_functions = {print}` Dynamo moves the call after the graph.
        if ctx.qualified_name(node.func) == "builtins.print" and not ctx.profile.reorders("print", "builtins.print"):
            ctx.report(type(self), node, fix=eager_only(node, ctx))

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = torch.relu(self.proj(x))
                print(f"proj output: {tuple(y.shape)}")
                return y.sum(dim=-1)
        """,
        """
        import torch


        def _report(t):
            print("in helper", t.shape)
            return t * 2


        @torch.compile
        def step(x: torch.Tensor):
            return _report(x + 1)
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
                if not torch.compiler.is_compiling():
                    print(f"proj output: {tuple(y.shape)}")
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x * 2


        def train(batches):
            for number, batch in enumerate(batches):
                loss = step(batch).sum()
                print("step", number, loss)
        """,
    )
