from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import built_by, method_receiver, report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# `random.Random` methods Dynamo does not model; `random`, `randint`, `randrange` and
# `uniform` (with constant arguments), `seed`, `getstate` and `setstate` are traced.
_UNTRACED_METHODS = frozenset(
    {
        "choice", "choices", "sample", "shuffle", "gauss", "normalvariate", "lognormvariate",
        "expovariate", "vonmisesvariate", "gammavariate", "betavariate", "paretovariate",
        "weibullvariate", "triangular", "getrandbits", "randbytes",
    }
)
# The module's own functions: `random.random` is skipped even though `Random.random` is
# traced, and so are the state functions.
MODULE_FUNCTIONS = frozenset(
    f"random.{name}" for name in _UNTRACED_METHODS | {"random", "seed", "getstate", "setstate"}
)
_RANDOM_CLASSES = frozenset({"random.Random"})

_REMEDY = "draw from torch's RNG instead (`torch.rand(())`, `torch.randint(...)`)"


class PythonRandomCall(Rule):
    code = "TL502"
    name = "python-random-call"
    message = (
        "a `random` module call in compiled code breaks the graph (Dynamo skips it); " + _REMEDY
    )
    suggestion = (
        "use torch's traced RNG: `torch.rand(())` for `random.random()`, "
        "`torch.randint(len(xs), ())` to pick an index for `random.choice(xs)`, "
        "`torch.randn(())` for `random.gauss(0, 1)`, `torch.randperm(n)` for `random.shuffle`"
    )
    gb_ids = ("GB0007", "GB0156")
    gb_types = ("Attempted to call function marked as skipped", "Unsupported method call")

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) in MODULE_FUNCTIONS:
            problem = f"`{spelled(node)}` in compiled code breaks the graph (Dynamo skips the `random` module)"
        elif (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _UNTRACED_METHODS
            and built_by(method_receiver(node), _RANDOM_CLASSES, ctx)
        ):
            problem = (
                f"`{spelled(node)}` on a `random.Random` in compiled code breaks the graph "
                "(Dynamo traces only its `random`, `randint`, `randrange` and `uniform`)"
            )
        else:
            return
        report_call(type(self), node, ctx, problem, _REMEDY)

    invalid = (
        """
        import random

        import torch


        class Model(torch.nn.Module):
            def __init__(self, layerdrop=0.0):
                super().__init__()
                self.layer = torch.nn.Linear(8, 8)
                self.layerdrop = layerdrop

            def forward(self, x):
                if self.training and random.random() < self.layerdrop:
                    return x
                return x + torch.relu(self.layer(x))
        """,
        """
        import random

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            noise = random.gauss(0.0, 1.0)
            return x + noise
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self, layerdrop=0.0):
                super().__init__()
                self.layer = torch.nn.Linear(8, 8)
                self.layerdrop = layerdrop

            def forward(self, x):
                y = torch.relu(self.layer(x))
                if self.training:
                    keep = torch.rand(()) >= self.layerdrop
                    y = y * keep
                return x + y
        """,
        """
        import random

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            shift = random.randint(0, 3)
            return torch.roll(x, shift, dims=-1)
        """,
    )
