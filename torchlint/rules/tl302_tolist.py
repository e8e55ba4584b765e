from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import tensor_method
from torchlint.rules.base import Rule

_TOLIST = frozenset({"tolist"})


class TensorToList(Rule):
    code = "TL302"
    name = "tensor-tolist"
    message = "`.tolist()` reads a tensor's values into Python, which breaks the graph"
    suggestion = "keep the values in a tensor and index or loop over it with tensor ops; convert outside the compiled function"
    gb_ids = ("GB0033", "GB0109")
    gb_types = ("Data dependent operator", "Tensor.tolist() with non-integer tensor")
    uses_kinds = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        # A float tensor's `.tolist()` breaks even under fullgraph, so the profile does not silence it.
        if tensor_method(node, _TOLIST, ctx):
            ctx.report(type(self), node)
