from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# `torch.seed()` and `torch.cuda.seed()` trace; setting a seed does not.
SEED_FUNCTIONS = frozenset(
    {
        "torch.manual_seed",
        "torch.random.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "torch.cuda.random.manual_seed",
        "torch.cuda.random.manual_seed_all",
    }
)
_REMEDY = "seed once outside the compiled function, or draw fixed random values once in `__init__`"


class ManualSeedInCompiledCode(Rule):
    code = "TL506"
    name = "manual-seed-in-compiled-code"
    message = "`torch.manual_seed()` in compiled code breaks the graph (Dynamo skips it); " + _REMEDY
    suggestion = (
        "call `torch.manual_seed(seed)` before the compiled function runs; values that must be "
        "the same on every call (a fixed projection, fixed noise) belong in a buffer made in "
        "`__init__` from `torch.Generator().manual_seed(seed)`"
    )
    gb_ids = ("GB0007",)
    gb_types = ("Attempted to call function marked as skipped",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) in SEED_FUNCTIONS:
            report_call(
                type(self),
                node,
                ctx,
                f"`{spelled(node)}` in compiled code breaks the graph (Dynamo skips it)",
                _REMEDY,
            )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                torch.manual_seed(1234)
                noise = torch.randn(8)
                return self.proj(x) + 0.1 * noise
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            torch.random.manual_seed(0)
            return x + torch.randn(8)
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                generator = torch.Generator().manual_seed(1234)
                self.register_buffer("noise", torch.randn(8, generator=generator))

            def forward(self, x):
                return self.proj(x) + 0.1 * self.noise
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x + torch.randn(8)


        def main():
            torch.manual_seed(0)
            return step(torch.zeros(8))
        """,
    )
