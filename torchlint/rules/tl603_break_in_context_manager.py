from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import breaks_by_block, describe, met_inside
from torchlint.rules.base import MetBreak, Rule
from torchlint.rules.context import Finding, RuleContext


class BreakInContextManager(Rule):
    code = "TL603"
    name = "break-in-context-manager"
    message = (
        "a graph break inside a `with` block of a user-defined context manager makes Dynamo skip the "
        "whole function, which then runs eagerly"
    )
    suggestion = (
        "fix the break inside the `with` block (the related finding says how), or move the breaking "
        "call out of the block"
    )
    gb_ids = ("GB0066",)
    gb_types = ("Graph break under GenericContextWrappingVariable",)

    def finish_function(self, findings: list[Finding], ctx: RuleContext) -> None:
        for block, inner in breaks_by_block(findings, ctx):
            if isinstance(block, cst.With):
                ctx.report(
                    type(self),
                    block,
                    header_only=True,
                    breaks_met=met_inside(inner),
                    restate=(ctx.function.qualname,),
                )

    @classmethod
    def restate(cls, args: tuple[str, ...], met: list[MetBreak]) -> str:
        return describe(met, "inside this `with` block", args[0])

    invalid = (
        """
        import contextlib

        import torch


        @contextlib.contextmanager
        def tagged(module):
            module.tag = "block"
            yield module


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                with tagged(self):
                    y = self.proj(x)
                    print("inside the tagged block")
                return y
        """,
        """
        import torch


        class Scope:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        @torch.compile
        def step(x: torch.Tensor):
            with Scope():
                y = x * 2
                n = y.sum().item()
            return y * n
        """,
    )

    valid = (
        """
        import contextlib

        import torch


        @contextlib.contextmanager
        def tagged(module):
            module.tag = "block"
            yield module


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                with tagged(self):
                    y = self.proj(x)
                    if not torch.compiler.is_compiling():
                        print("inside the tagged block")
                return y
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            with torch.no_grad():
                print("in no_grad")
                y = x * 2
            return y
        """,
    )
