from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import describe, loops_and_their_breaks
from torchlint.rules.base import MetBreak, Rule
from torchlint.rules.context import Finding, RuleContext


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

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        for function, loop, met in loops_and_their_breaks(findings, ctx):
            ctx.report(
                type(self),
                loop,
                header_only=True,
                function=function,
                breaks_met=tuple(met),
                restate=(_keyword(loop), function.qualname),
            )

    @classmethod
    def restate(cls, args: tuple[str, ...], met: list[MetBreak]) -> str:
        keyword, function = args
        own = [m for m in met if m.code is not None and m.via is None]
        helpers = [m for m in met if m.code is not None and m.via is not None]
        if own:
            where = f"inside this {keyword} loop"
        else:
            first = helpers[0].via if helpers else next(m.callee for m in met if m.callee is not None)
            where = f"in `{first}`, called inside this {keyword} loop,"
        return describe(own + helpers + [m for m in met if m.callee is not None], where, function)

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
