from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._side_effects import GUARD_SUGGESTION, eager_only, shown_name
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# builtin breakpoint() fails as a builtin; the debugger modules are skipped by Dynamo.
DEBUGGER_CALLS = frozenset(
    {"builtins.breakpoint", "pdb.set_trace", "pdb.post_mortem", "ipdb.set_trace", "pudb.set_trace"}
)


class DebuggerInCompiledCode(Rule):
    code = "TL106"
    name = "debugger-in-compiled-code"
    message = (
        "debugger call in compiled code breaks the graph; debug the eager model "
        "(`torch.compiler.set_stance('force_eager')`) or guard it with `torch.compiler.is_compiling()`"
    )
    suggestion = GUARD_SUGGESTION.format(call="breakpoint")
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0059", "GB0007")
    gb_types = ("Failed to trace builtin operator", "Attempted to call function marked as skipped")

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) in DEBUGGER_CALLS:
            shown = shown_name(node)
            ctx.report(
                type(self),
                node,
                message=f"`{shown}()` in compiled code breaks the graph; debug the eager model "
                "(`torch.compiler.set_stance('force_eager')`) or guard it with "
                "`torch.compiler.is_compiling()`",
                suggestion=GUARD_SUGGESTION.format(call=shown),
                fix=eager_only(node, ctx),
            )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = torch.nn.LayerNorm(8)
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                h = self.norm(x)
                breakpoint()
                return self.proj(h) + x
        """,
        """
        import pdb

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            pdb.set_trace()
            return y
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = torch.nn.LayerNorm(8)
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                h = self.norm(x)
                if not torch.compiler.is_compiling():
                    breakpoint()
                return self.proj(h) + x
        """,
        """
        import pdb

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x * 2


        def debug(x):
            y = step(x)
            pdb.set_trace()
            return y
        """,
    )
