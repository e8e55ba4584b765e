from __future__ import annotations

import libcst as cst

from torchlint.rules._dynamic_shapes import CAPTURE_HINT, report_dynamic_op
from torchlint.rules.base import Rule

_OPS = frozenset({"nonzero", "argwhere"})


class Nonzero(Rule):
    code = "TL401"
    name = "nonzero"
    message = "`nonzero()` has an output size that depends on the data, which breaks the graph"
    suggestion = f"keep a fixed shape: a mask with `torch.where(mask, x, 0)`, `count_nonzero`, {CAPTURE_HINT}"
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)
    uses_kinds = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        report_dynamic_op(type(self), node, _OPS, ctx)
