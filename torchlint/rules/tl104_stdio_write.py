from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._side_effects import GUARD_SUGGESTION, eager_only, shown_name
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

STREAMS = frozenset({"sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__"})


class StdioWriteInCompiledCode(Rule):
    code = "TL104"
    name = "stdio-write-in-compiled-code"
    message = (
        "`sys.stdout`/`sys.stderr` method call in compiled code breaks the graph (Dynamo cannot "
        "trace the stream's methods); guard it with `torch.compiler.is_compiling()` or move it out"
    )
    suggestion = GUARD_SUGGESTION.format(call="sys.stdout.write")
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0156",)
    gb_types = ("Unsupported method call",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and ctx.qualified_name(func.value) in STREAMS
        ):
            ctx.report(
                type(self), node, suggestion=GUARD_SUGGESTION.format(call=shown_name(node)), fix=eager_only(node, ctx)
            )

    invalid = (
        """
        import sys

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                sys.stdout.write(f"batch of {x.shape[0]}")
                return self.proj(x)
        """,
        """
        import sys

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            sys.stderr.flush()
            return y
        """,
    )

    valid = (
        """
        import sys

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                if not torch.compiler.is_compiling():
                    sys.stdout.write(f"batch of {x.shape[0]}")
                return self.proj(x)
        """,
        """
        import sys

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x * 2


        def run(batches):
            for batch in batches:
                step(batch)
                sys.stdout.write(".")
            sys.stdout.flush()
        """,
    )
