from __future__ import annotations

import libcst as cst

from torchlint.rules._dynamic_shapes import CAPTURE_HINT, report_dynamic_op
from torchlint.rules.base import Rule

_OPS = frozenset({"unique", "unique_consecutive"})


class Unique(Rule):
    code = "TL404"
    name = "unique"
    message = "`unique()` has an output size that depends on the data, which breaks the graph"
    suggestion = f"work with fixed shapes (counts per class with `F.one_hot(x, num_classes=n).sum(0)`), {CAPTURE_HINT}"
    gb_ids = ("GB0036",)
    gb_types = ("Dynamic shape operator",)
    uses_kinds = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        report_dynamic_op(type(self), node, _OPS, ctx)
