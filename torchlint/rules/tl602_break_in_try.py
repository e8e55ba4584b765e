from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import breaks_by_block, describe, met_inside
from torchlint.rules.base import MetBreak, Rule
from torchlint.rules.context import Finding, RuleContext


class BreakInTry(Rule):
    code = "TL602"
    name = "break-in-try"
    message = "a graph break inside a `try` block makes Dynamo skip the whole function, which then runs eagerly"
    suggestion = (
        "fix the break inside the `try` (the related finding says how), or move the breaking call "
        "out of the `try` block"
    )
    # Dynamo gives no type of its own: the skip is logged with the inner break's type.
    wraps_breaks = True

    def finish_function(self, findings: list[Finding], ctx: RuleContext) -> None:
        for block, inner in breaks_by_block(findings, ctx):
            if isinstance(block, (cst.Try, cst.TryStar)):
                ctx.report(
                    type(self),
                    block,
                    header_only=True,
                    breaks_met=met_inside(inner),
                    restate=(ctx.function.qualname,),
                )

    @classmethod
    def restate(cls, args: tuple[str, ...], met: list[MetBreak]) -> str:
        return describe(met, "inside this `try` block", args[0])

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                try:
                    scale = y.abs().amax().item()
                except RuntimeError:
                    scale = 1.0
                return y / (scale + 1e-6)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            try:
                print("inside try")
                y = x * 2
            except RuntimeError:
                y = x
            return y
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
                try:
                    scale = y.abs().amax().detach()
                except RuntimeError:
                    scale = 1.0
                return y / (scale + 1e-6)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            try:
                raise ValueError("fallback")
            except ValueError:
                y = x * 2
            return y
        """,
    )
