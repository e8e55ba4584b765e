from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import built_by, method_receiver, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# The `random.Random` methods Dynamo traces by running them once while compiling: the number
# drawn then is a constant of the graph. (Its other methods break the graph: TL502.)
_TRACED_DRAWS = frozenset({"random", "randint", "randrange", "uniform"})
_RANDOM_CLASSES = frozenset({"random.Random"})


class RandomInstanceInCompiledCode(Rule):
    code = "TL710"
    name = "random-instance-in-compiled-code"
    effect = "returns a constant"
    message = (
        "a `random.Random` draw in compiled code is made once, while compiling, and the graph returns "
        "that same number on every call; draw from torch's RNG instead"
    )
    suggestion = (
        "use torch's RNG, traced as an op and seeded with `torch.manual_seed` outside: `torch.rand(())` "
        "for `rng.random()`, `torch.randint(lo, hi + 1, ())` for `rng.randint(lo, hi)`"
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _TRACED_DRAWS):
            return
        if built_by(method_receiver(node), _RANDOM_CLASSES, ctx) is None:
            return
        message = (
            f"`{spelled(node)}` on a `random.Random` in compiled code is drawn once, while compiling: "
            "every call of the graph returns that same number, with no recompile and no warning"
        )
        ctx.report(type(self), node, message)

    invalid = (
        """
        import random

        import torch


        class Jitter(torch.nn.Module):
            def __init__(self, seed=0):
                super().__init__()
                self.rng = random.Random(seed)

            def forward(self, x):
                return x * self.rng.uniform(0.9, 1.1)
        """,
        """
        import random

        import torch

        RNG = random.Random(1234)


        @torch.compile
        def drop_path(x, p: float = 0.1):
            if RNG.random() < p:
                return torch.zeros_like(x)
            return x
        """,
    )

    valid = (
        """
        import random

        import torch


        class Jitter(torch.nn.Module):
            def __init__(self, seed=0):
                super().__init__()
                self.rng = random.Random(seed)

            def forward(self, x):
                scale = 0.9 + 0.2 * torch.rand(())
                return x * scale

            def reseed(self):
                return self.rng.randint(0, 2**31)
        """,
        """
        import random

        import torch


        def train(model, batches, seed=0):
            rng = random.Random(seed)
            compiled = torch.compile(model)
            for batch in batches:
                if rng.random() < 0.5:
                    batch = batch.flip(-1)
                compiled(batch)
        """,
    )
