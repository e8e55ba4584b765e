from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._tensor_methods import keyword, positional
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import one_hot_classes


class OneHotWithoutNumClasses(Rule):
    code = "TL407"
    name = "one-hot-without-num-classes"
    message = "`one_hot()` without `num_classes` sizes its output from the data, which breaks the graph (also under fullgraph)"
    suggestion = "pass the class count: `F.one_hot(x, num_classes=n)`"
    fixes = (Applicability.UNSAFE, Applicability.DISPLAY_ONLY)
    gb_ids = ("GB0246",)
    gb_types = ("Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) != "torch.nn.functional.one_hot":
            return
        given = keyword(node, "num_classes") or (positional(node)[1] if len(positional(node)) > 1 else None)
        value = given.value if given is not None else None
        unknown_count = value is None or (
            isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer)
        )
        if unknown_count:
            ctx.report(type(self), node, fix=one_hot_classes(node, given, ctx))

    invalid = (
        """
        import torch
        import torch.nn.functional as F


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.router = torch.nn.Linear(8, 4)

            def forward(self, x):
                expert = self.router(x).argmax(dim=-1)
                load = F.one_hot(expert).float().mean(dim=0)
                return (load**2).sum()
        """,
        """
        import torch
        import torch.nn.functional as F


        @torch.compile
        def step(x: torch.Tensor):
            return F.one_hot(x.argmax(dim=-1), -1).float()
        """,
    )

    valid = (
        """
        import torch
        import torch.nn.functional as F


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.router = torch.nn.Linear(8, 4)

            def forward(self, x):
                expert = self.router(x).argmax(dim=-1)
                load = F.one_hot(expert, num_classes=self.router.out_features).float().mean(dim=0)
                return (load**2).sum()
        """,
        """
        import torch
        import torch.nn.functional as F


        @torch.compile
        def step(x: torch.Tensor):
            return F.one_hot(x.argmax(dim=-1), 8).float()
        """,
    )
