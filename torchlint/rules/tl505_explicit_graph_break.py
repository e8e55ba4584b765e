from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._untraceable_calls import spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, remove_statement

# torch 2.13 has no `torch.compiler` spelling of it.
GRAPH_BREAK_FUNCTIONS = frozenset({"torch._dynamo.graph_break", "torch._dynamo.decorators.graph_break"})


def _called_alone(statement: cst.CSTNode | None, ctx: RuleContext) -> cst.Call | None:
    """The graph-break call that is all of ``statement``, if it is one."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        if ctx.qualified_name(small.value.func) in GRAPH_BREAK_FUNCTIONS:
            return small.value
    return None


class ExplicitGraphBreak(Rule):
    code = "TL505"
    name = "explicit-graph-break"
    message = "`torch._dynamo.graph_break()` splits the graph on purpose; remove it once it is no longer needed"
    suggestion = (
        "delete the call; to see where Dynamo splits the graph without editing the code, run with "
        "`TORCH_LOGS=graph_breaks` or `torchlint check`"
    )
    fixes = (Applicability.SAFE,)
    gb_ids = ("GB0025",)
    gb_types = ("Call to `torch._dynamo.graph_break()`",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) in GRAPH_BREAK_FUNCTIONS:
            problem = f"`{spelled(node)}` in compiled code splits the graph on purpose"
            ctx.report(type(self), node, f"{problem}; remove it once it is no longer needed", fix=self._removal(node, ctx))

    @staticmethod
    def _removal(node: cst.Call, ctx: RuleContext) -> FixPlan | None:
        """Deleting the call is safe: outside a compiled graph it does nothing."""
        statement, function = ctx.statement, ctx.function
        if function is None or _called_alone(statement, ctx) is not node:
            return None

        def removed_too(line: cst.CSTNode) -> bool:
            return _called_alone(line, ctx) is not None

        return remove_statement(statement, function.node, f"Remove `{spelled(node)}`", Applicability.SAFE, removed_too)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = torch.relu(self.proj(x))
                torch._dynamo.graph_break()
                return y.sum(dim=-1)
        """,
        """
        import torch
        from torch._dynamo import graph_break


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            graph_break()
            return y + 1
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
                return y.sum(dim=-1)
        """,
        """
        import torch


        def graph_break(t):
            return t.detach()


        @torch.compile
        def step(x: torch.Tensor):
            return graph_break(x * 2) + 1
        """,
    )
