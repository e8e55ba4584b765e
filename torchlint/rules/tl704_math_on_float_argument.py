from __future__ import annotations

import libcst as cst

from torchlint.rules._changing_values import entry_condition, passed_parameter
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# The `math` functions Dynamo evaluates on the exact number (measured on torch 2.13: 7
# recompiles and the limit in ten calls with a new argument each). The others (`sqrt`, `sin`,
# `cos`, `tan`, their inverses, `sinh`, `cosh`, `tanh`, `floor`, `ceil`, `trunc`, `log2`,
# `radians`) stay symbolic after one recompile; `isnan`, `isinf`, `isfinite` and `isclose`
# cost two.
SPECIALIZING = frozenset(
    f"math.{name}"
    for name in (
        "exp", "exp2", "expm1", "log", "log10", "log1p", "fabs", "asinh", "erf", "erfc", "gamma",
        "lgamma", "degrees", "cbrt", "pow", "atan2", "hypot", "copysign", "fmod", "remainder",
    )
)


class MathOnFloatArgument(Rule):
    code = "TL704"
    name = "math-on-float-argument"
    effect = "recompiles"
    message = (
        "a `math` function on a number the caller passes makes Dynamo guard on its exact value, "
        "so every new value recompiles; pass a 0-d tensor and use the torch function"
    )
    suggestion = (
        "pass the number as a 0-d tensor (`torch.tensor(temperature)`) and use `torch.exp(t)`, "
        "`torch.sqrt(t)`, ...: a tensor's value is data, not a guard"
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if name not in SPECIALIZING:
            return
        for arg in node.args:
            parameter = passed_parameter(arg.value, ctx)
            if parameter is not None:
                message = (
                    f"`{name}()` on `{parameter}`, a number the caller passes, makes Dynamo guard on its "
                    "exact value: every new value recompiles (up to `recompile_limit`, then the code "
                    "runs eagerly)"
                )
                ctx.report(type(self), node, message, when=entry_condition(ctx))
                return

    invalid = (
        """
        import math

        import torch


        @torch.compile
        def sample(logits, temperature: float):
            return torch.softmax(logits / math.exp(temperature), -1)
        """,
        """
        import math

        import torch


        class Decay(torch.nn.Module):
            def forward(self, x, step, half_life=1000.0):
                rate = math.log(2) * step / half_life
                return x * math.pow(0.5, step / half_life) + rate


        def train(batches):
            compiled = torch.compile(Decay())
            for step, batch in enumerate(batches):
                compiled(batch, step)
        """,
    )

    valid = (
        """
        import math

        import torch


        class Attention(torch.nn.Module):
            def __init__(self, dim=64):
                super().__init__()
                self.scale = 1 / math.sqrt(dim)

            def forward(self, q, k, temperature: float):
                return torch.softmax(q @ k.T * self.scale * math.sqrt(temperature), -1)
        """,
        """
        import torch


        @torch.compile
        def sample(logits, temperature: torch.Tensor):
            return torch.softmax(logits / torch.exp(temperature), -1)
        """,
    )
