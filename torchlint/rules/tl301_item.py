from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import tensor_method
from torchlint.rules.base import Rule

_ITEM = frozenset({"item"})


class TensorItem(Rule):
    code = "TL301"
    name = "tensor-item"
    message = "`.item()` reads a tensor's value into Python, which breaks the graph"
    suggestion = (
        "keep it a 0-d tensor (`y * t.sum()` rather than `y * t.sum().item()`), or set "
        "`torch._dynamo.config.capture_scalar_outputs = True`"
    )
    gb_ids = ("GB0124",)
    gb_types = ("Unsupported Tensor.item() call with capture_scalar_outputs=False",)
    uses_kinds = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not ctx.scalars_captured and tensor_method(node, _ITEM, ctx):
            ctx.report(type(self), node)
