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
        # Captured scalars cover an integer tensor's `.tolist()`; a float tensor's breaks even
        # under fullgraph, so only a receiver known to hold integers is let go.
        if tensor_method(node, _TOLIST, ctx) and not (ctx.scalars_captured and _integers(node.func.value, ctx)):
            ctx.report(type(self), node)


# Tensor methods whose result holds integers whatever the input's dtype.
_INTEGER_METHODS = frozenset(
    {"argmax", "argmin", "argsort", "nonzero", "argwhere", "long", "int", "short", "count_nonzero", "bincount"}
)


def _integers(receiver: cst.BaseExpression, ctx) -> bool:
    """An integer tensor: an index-valued method's result, or the sum of a mask."""
    if isinstance(receiver, cst.Name):
        receiver = ctx.assigned_value(receiver) or receiver
    if not isinstance(receiver, cst.Call) or not isinstance(receiver.func, cst.Attribute):
        return False
    method, base = receiver.func.attr.value, receiver.func.value
    if method in _INTEGER_METHODS:
        return True
    return method == "sum" and ctx.kinds is not None and ctx.kinds.is_mask(base)
