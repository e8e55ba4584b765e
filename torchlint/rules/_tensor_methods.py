"""Finding `t.method(...)` / `torch.method(t, ...)` calls on values that may be tensors."""

from __future__ import annotations

import libcst as cst

from torchlint.rules.context import RuleContext
from torchlint.semantic.kind_vocabulary import Kind

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
