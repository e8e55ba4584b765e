from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, binds_torch, replace_node


# `math` functions whose torch counterpart computes the same thing on a tensor.
_TORCH_NAMES = {
    **{name: name for name in (
        "isnan", "isinf", "isfinite", "isclose", "sqrt", "exp", "expm1", "log", "log2", "log10", "log1p",
        "floor", "ceil", "trunc", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
        "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma", "pow", "fmod", "hypot", "copysign",
        "ldexp", "frexp", "gcd", "lcm",
    )},
    "fabs": "abs",
    "degrees": "rad2deg",
    "radians": "deg2rad",
}


# Counterparts that take the same positional arguments and no keywords, so the call keeps its
# arguments: `math.log(x, base)` and the others' keyword forms have no one-to-one spelling.
_SAME_ARGUMENTS = frozenset(_TORCH_NAMES) - {"isclose", "frexp", "ldexp", "gcd", "lcm", "hypot", "log"}


def _torch_call(node: cst.Call, name: str, ctx: RuleContext) -> FixPlan | None:
    """`math.exp(t)` -> `torch.exp(t)`. Unsafe: the result is a 0-d tensor rather than a Python
    number, and the gradient now reaches the tensor."""
    short = name.removeprefix("math.")
    if short not in _SAME_ARGUMENTS and not (short == "log" and len(node.args) == 1):
        return None
    if any(arg.keyword is not None or arg.star for arg in node.args) or not binds_torch(ctx.summary.module):
        return None
    func = f"torch.{_TORCH_NAMES[short]}"
    return replace_node(node.func, func, f"Use `{func}`", Applicability.UNSAFE)


def _suggestion(name: str) -> str | None:
    torch_name = _TORCH_NAMES.get(name.removeprefix("math."))
    if torch_name is None:
        return None
    return f"use `torch.{torch_name}(...)` on the tensor instead of `{name}(...)`: it stays in the graph"


class MathOnTensor(Rule):
    code = "TL203"
    name = "math-on-tensor"
    message = "a `math` function on a tensor turns it into a Python number, which breaks the graph"
    suggestion = "use the torch function on the tensor: `torch.isnan(t)`, `torch.sqrt(t)`, `torch.floor(t)`"
    # `math.isnan(t)` of a tensor is a data-dependent operator; `math.isnan(t.item())` breaks
    # at the `.item()`, which TL301 reports.
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if name is None or not name.startswith("math."):
            return
        # Not silenced by `capture_scalar_outputs`: the `math` call still needs the value.
        if any(ctx.is_tensor(arg.value) for arg in node.args):
            message = f"`{name}()` on a tensor turns it into a Python number, which breaks the graph"
            ctx.report(type(self), node, message, _suggestion(name), fix=_torch_call(node, name, ctx))

    invalid = (
        """
        import math

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.log_temperature = torch.nn.Parameter(torch.tensor(0.5))

            def forward(self, x):
                logits = self.proj(x)
                return logits / math.exp(self.log_temperature)
        """,
        """
        import math

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            if math.isnan(x.sum()):
                return torch.zeros_like(x)
            return x
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.log_temperature = torch.nn.Parameter(torch.tensor(0.5))

            def forward(self, x):
                logits = self.proj(x)
                return logits / torch.exp(self.log_temperature)
        """,
        """
        import math

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            scale = math.sqrt(x.shape[-1])
            return x / scale
        """,
    )
