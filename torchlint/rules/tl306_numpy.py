from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import tensor_method
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_NUMPY = frozenset({"numpy"})


class NumpyWithoutTracing(Rule):
    code = "TL306"
    name = "tensor-numpy-untraced"
    message = "`.numpy()` with `trace_numpy=False` breaks the graph, and so does the NumPy code that uses the array"
    suggestion = "stay in torch inside the compiled function, or keep `torch._dynamo.config.trace_numpy = True` (the default)"
    gb_ids = ("GB0105",)
    gb_types = ("Tensor.numpy() with trace_numpy=False",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        # With torch's default `trace_numpy=True` Dynamo traces NumPy code: no break.
        if not ctx.profile.trace_numpy and tensor_method(node, _NUMPY, ctx):
            ctx.report(type(self), node)

    invalid = (
        """
        import torch

        torch._dynamo.config.trace_numpy = False


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                return torch.from_numpy(y.detach().numpy().clip(-1.0, 1.0))
        """,
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.trace_numpy = False


        @torch.compile
        def step(x: torch.Tensor):
            a = x.numpy()
            return torch.from_numpy(a * 2)
        """,
    )

    valid = (
        """
        import numpy as np
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            a = x.numpy()
            return torch.from_numpy(np.clip(a, -1.0, 1.0) * 2)
        """,
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.trace_numpy = False


        @torch.compile
        def step(x: torch.Tensor):
            return x.clamp(-1.0, 1.0)


        def predict(x):
            return step(x).numpy()
        """,
    )
