from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import shown_name
from torchlint.rules._untraceable_values import report
from torchlint.rules.base import Rule

_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_REMEDY = "create it in `__init__` (or use a plain tensor)"


class ParameterInForward(Rule):
    code = "TL510"
    name = "parameter-in-forward"
    message = f"constructing an `nn.Parameter` in compiled code breaks the graph; {_REMEDY}"
    suggestion = (
        "`self.scale = nn.Parameter(torch.ones(dim))` in `__init__`; a lazily sized parameter can be "
        "an `nn.LazyLinear`-style module or a size passed to `__init__`; a constant needs no Parameter"
    )
    gb_ids = ("GB0264",)
    gb_types = ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualified_name(node.func) in _PARAMETER:
            report(
                type(self),
                node,
                ctx,
                f"`{shown_name(node)}(...)` in compiled code breaks the graph (Dynamo cannot construct "
                f"a Parameter while tracing); {_REMEDY}",
            )
