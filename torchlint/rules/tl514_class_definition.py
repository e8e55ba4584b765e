from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext


class ClassDefinitionInCompiledCode(Rule):
    code = "TL514"
    name = "class-definition-in-compiled-code"
    message = "a `class` statement in compiled code breaks the graph; define the class at module level"
    suggestion = "move the class (a local result type, a helper) to module level and use it from there"
    # torch 2.11 on Python 3.12 stops at the class body's bytecode instead (GB0082).
    gb_ids = ("GB8977", "GB0082")
    gb_types = ("Invalid call to __build_class__", "Missing bytecode handler")

    def visit_ClassDef(self, node: cst.ClassDef, ctx: RuleContext) -> None:
        # The checker shows a nested class statement to the rules without entering its body.
        # The whole statement is reported: building the class is its instructions together.
        ctx.report(
            type(self),
            node,
            f"`class {node.name.value}` in compiled code breaks the graph (Dynamo cannot build a class "
            "while tracing); define the class at module level",
        )

    invalid = (
        """
        from typing import NamedTuple

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                class Encoded(NamedTuple):
                    hidden: torch.Tensor
                    pooled: torch.Tensor

                hidden = torch.relu(self.proj(x))
                out = Encoded(hidden, hidden.mean(dim=0))
                return out.hidden + out.pooled
        """,
        """
        import torch


        def _scaled(t: torch.Tensor):
            class Local:
                scale = 2.0

            return t * Local.scale


        @torch.compile
        def step(x: torch.Tensor):
            return _scaled(x + 1)
        """,
    )

    valid = (
        """
        from typing import NamedTuple

        import torch


        class Encoded(NamedTuple):
            hidden: torch.Tensor
            pooled: torch.Tensor


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                hidden = torch.relu(self.proj(x))
                out = Encoded(hidden, hidden.mean(dim=0))
                return out.hidden + out.pooled
        """,
        """
        import collections

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            Pair = collections.namedtuple("Pair", ["a", "b"])
            p = Pair(*x.chunk(2))
            return p.a + p.b
        """,
    )
