from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import integer_valued, tensor_method
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_TOLIST = frozenset({"tolist"})


class TensorToList(Rule):
    code = "TL302"
    name = "tensor-tolist"
    message = "`.tolist()` reads a tensor's values into Python, which breaks the graph"
    suggestion = "keep the values in a tensor and index or loop over it with tensor ops; convert outside the compiled function"
    gb_ids = ("GB0033", "GB0109")
    gb_types = ("Data dependent operator", "Tensor.tolist() with non-integer tensor")

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        # Captured scalars cover an integer tensor's `.tolist()`; a float tensor's breaks even
        # under fullgraph, so only a receiver known to hold integers is let go.
        if tensor_method(node, _TOLIST, ctx) and not (ctx.scalars_captured and integer_valued(node.func.value, ctx)):
            ctx.report(type(self), node)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.router = torch.nn.Linear(8, 4)
                self.codebook = torch.nn.Embedding(4, 8)

            def forward(self, x):
                codes = self.router(x).argmax(dim=-1).tolist()
                return torch.stack([self.codebook.weight[c] for c in codes])
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

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.router = torch.nn.Linear(8, 4)
                self.codebook = torch.nn.Embedding(4, 8)

            def forward(self, x):
                codes = self.router(x).argmax(dim=-1)
                return self.codebook(codes)
        """,
        """
        import torch


        @torch.compile(fullgraph=True)
        def step(x: torch.Tensor):
            counts = (x > 0).sum(dim=-1).tolist()
            return x * len(counts)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x.softmax(dim=-1)


        def predict(x):
            return step(x).argmax(dim=-1).tolist()
        """,
    )

