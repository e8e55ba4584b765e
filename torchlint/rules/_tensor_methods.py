"""Finding `t.method(...)` / `torch.method(t, ...)` calls on values that may be tensors."""

from __future__ import annotations

import libcst as cst

from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

# A method with a tensor's name on one of these is not a tensor method.
_NOT_TENSORS = (Kind.PYTHON, Kind.SIZE, Kind.META, Kind.MODULE)


def tensor_method(node: cst.Call, names: frozenset[str], ctx: RuleContext) -> str | None:
    """The method's name when ``node`` is ``<tensor>.<name>(...)`` for one of ``names``.

    The receiver must not be known to be something else; these method names are
    distinctive enough that an unknown receiver counts.
    """
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in names:
        return None
    if ctx.qualified_name(func) is not None:
        return None  # `torch.nonzero` and other module functions are matched by name
    return func.attr.value if ctx.kind_of(func.value) not in _NOT_TENSORS else None


def torch_function(node: cst.Call, names: frozenset[str], ctx: RuleContext) -> str | None:
    """The short name when ``node`` calls ``torch.<name>`` (or an alias) for one of ``names``."""
    qualified = ctx.qualified_name(node.func)
    if qualified is None:
        return None
    for prefix in ("torch.", "torch.Tensor.", "torch.nn.functional."):
        if qualified.startswith(prefix) and qualified[len(prefix):] in names:
            return qualified[len(prefix):]
    return None


def keyword(node: cst.Call, name: str) -> cst.Arg | None:
    return next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == name), None)


def positional(node: cst.Call) -> list[cst.Arg]:
    return [arg for arg in node.args if arg.keyword is None and not arg.star]


# Tensor methods whose result holds integers whatever the input's dtype.
_INTEGER_METHODS = frozenset(
    {"argmax", "argmin", "argsort", "nonzero", "argwhere", "long", "int", "short", "count_nonzero", "bincount"}
)


def integer_valued(node: cst.BaseExpression, ctx: RuleContext, follow_names: bool = True) -> bool:
    """An integer tensor: an index-valued method's result, or the sum of a mask; through the
    value a name was assigned unless ``follow_names`` is off."""
    if isinstance(node, cst.Name) and follow_names:
        node = ctx.assigned_value(node) or node
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return False
    method, base = node.func.attr.value, node.func.value
    if method in _INTEGER_METHODS:
        return True
    return method == "sum" and ctx.kinds is not None and ctx.kinds.is_mask(base)
