from __future__ import annotations

import libcst as cst

from torchlint.rules._data_dependent import with_fullgraph_note
from torchlint.rules.base import Rule


class TorchEqual(Rule):
    code = "TL202"
    name = "torch-equal"
    message = "`torch.equal()` / `torch.allclose()` return a Python bool read from the data, which breaks the graph"
    suggestion = "keep it a tensor: `(a == b).all()`, and choose with `torch.where` rather than `if`"
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = ctx.qualified_name(node.func)
        if name in ("torch.equal", "torch.allclose"):
            message = f"`{name}()` returns a Python bool read from the data, which breaks the graph"
            ctx.report(type(self), node, with_fullgraph_note(message, ctx))
