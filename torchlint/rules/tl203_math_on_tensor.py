from __future__ import annotations

import libcst as cst

from torchlint.rules._data_dependent import with_fullgraph_note
from torchlint.rules.base import Rule


class MathOnTensor(Rule):
    code = "TL203"
    name = "math-on-tensor"
    message = "a `math` function on a tensor turns it into a Python number, which breaks the graph"
    suggestion = "use the torch function on the tensor: `torch.isnan(t)`, `torch.sqrt(t)`, `torch.floor(t)`"
    # `math.isnan(t)` of a tensor is a data-dependent operator; `math.isnan(t.item())` breaks
    # at the `.item()`, which TL301 reports.
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)
    uses_kinds = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = ctx.qualified_name(node.func)
        if name is None or not name.startswith("math."):
            return
        # Not silenced by `capture_scalar_outputs`: the `math` call still needs the value.
        if any(ctx.is_tensor(arg.value) for arg in node.args):
            message = f"`{name}()` on a tensor turns it into a Python number, which breaks the graph"
            ctx.report(type(self), node, with_fullgraph_note(message, ctx))
