from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import breaks_by_block, describe, gb_ids_of, loops_calling_breaking_helpers
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext
from torchlint.analysis.summary import FunctionInfo


class BreakInLoop(Rule):
    code = "TL601"
    name = "break-in-loop"
    message = "a graph break inside a loop makes Dynamo skip the whole function, which then runs eagerly"
    suggestion = (
        "fix the break inside the loop (the related finding says how); where it must stay, move the "
        "loop into a helper so that only the helper runs eagerly"
    )
    gb_ids = ("GB7000",)
    gb_types = ("graph break in loop",)

    def finish_function(self, findings: list[Finding], ctx: RuleContext) -> None:
        for block, inner in breaks_by_block(findings, ctx):
            if isinstance(block, (cst.For, cst.While)):
                self._report(block, inner, f"inside this {_keyword(block)} loop", ctx.function, ctx)

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        # A helper called in a loop is inlined there: its break skips the caller's frame too.
        reported = {id(f.node) for f in findings if f.rule is type(self)}
        for caller, loop, inner in loops_calling_breaking_helpers(findings, ctx):
            if id(loop) in reported:
                continue
            helper = inner[0].function.qualname
            self._report(loop, inner, f"in `{helper}`, called inside this {_keyword(loop)} loop,", caller, ctx)

    def _report(
        self, loop: cst.CSTNode, inner: list[Finding], where: str, function: FunctionInfo, ctx: RuleContext
    ) -> None:
        ctx.report(
            type(self),
            loop,
            describe(inner, where, function.qualname),
            related=tuple(inner),
            gb_ids=gb_ids_of(self.gb_ids, inner),
            header_only=True,
            function=function,
        )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(2))

            def forward(self, x):
                for layer in self.layers:
                    x = torch.relu(layer(x))
                    print("layer done")
                return x
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            for _ in range(3):
                if x.sum() > 5:
                    break
                x = x * 2
            return x
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(2))

            def forward(self, x):
                for layer in self.layers:
                    x = torch.relu(layer(x))
                    if not torch.compiler.is_compiling():
                        print("layer done")
                return x
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            total = 0
            for v in x.argmax(dim=-1).tolist():
                total += v
            return x + total
        """,
    )


def _keyword(loop: cst.CSTNode) -> str:
    return "`for`" if isinstance(loop, cst.For) else "`while`"
