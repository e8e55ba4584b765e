from __future__ import annotations

import libcst as cst

from torchlint.rules._dynamic_shapes import CAPTURE_HINT, report_dynamic_op
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_OPS = frozenset({"unique", "unique_consecutive"})


class Unique(Rule):
    code = "TL404"
    name = "unique"
    message = "`unique()` has an output size that depends on the data, which breaks the graph"
    suggestion = f"work with fixed shapes (counts per class with `F.one_hot(x, num_classes=n).sum(0)`), {CAPTURE_HINT}"
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        report_dynamic_op(type(self), node, _OPS, ctx)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.classifier = torch.nn.Linear(8, 5)

            def forward(self, x):
                labels = self.classifier(x).argmax(dim=-1)
                present, counts = torch.unique(labels, return_counts=True)
                histogram = torch.zeros(5).index_put((present,), counts.float())
                return histogram / x.shape[0]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            labels = x.argmax(dim=-1)
            return labels.unique()
        """,
    )

    valid = (
        """
        import torch
        import torch.nn.functional as F


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.classifier = torch.nn.Linear(8, 5)

            def forward(self, x):
                labels = self.classifier(x).argmax(dim=-1)
                histogram = F.one_hot(labels, num_classes=5).sum(dim=0).float()
                return histogram / x.shape[0]
        """,
        """
        import torch


        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            return torch.unique(x.argmax(dim=-1))
        """,
    )
