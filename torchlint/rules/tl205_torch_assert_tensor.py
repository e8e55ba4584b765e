from __future__ import annotations

import libcst as cst

from torchlint.rules._data_dependent import with_fullgraph_note
from torchlint.rules.base import Rule


class TorchAssertOnTensor(Rule):
    code = "TL205"
    name = "torch-assert-on-tensor"
    message = "`torch._assert()` on a tensor condition reads the data, which breaks the graph"
    suggestion = "check on the device: `torch._assert_async(cond, \"message\")`"
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)
    uses_kinds = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualified_name(node.func) != "torch._assert" or not node.args:
            return
        if ctx.is_tensor(node.args[0].value):
            ctx.report(type(self), node, with_fullgraph_note(self.message, ctx))
