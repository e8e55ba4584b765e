"""Values that may change from one call of compiled code to the next, as the recompile rules
(TL7xx) ask about them: a number handed in as a parameter, a size of an input tensor.

Dynamo turns an int or float argument that changes into a symbol after one recompile; it
recompiles on every new value only where the code forces the exact value (a loop unrolled
over it, `math.*` on it, an inductor scalar argument). These helpers find the value; the
rules decide whether its use forces it.
"""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.conditions import FALSE, Condition, EntryPoint
from torchlint.analysis.kind_vocabulary import Kind
from torchlint.rules.context import RuleContext

# Arithmetic that keeps a changing value changing: `-lr`, `n + 1`, `steps * 2`.
_ARITHMETIC = (cst.UnaryOperation, cst.BinaryOperation)


def _operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    return [node]


def entry_condition(ctx: RuleContext) -> Condition:
    """A parameter holds what the caller's code passes, changing from call to call, only where
    Dynamo starts a frame at the function; a helper it calls gets what compiled code hands it,
    most often the same on every call (`max_distance=self.max_distance`)."""
    function = ctx.function
    return FALSE if function is None else EntryPoint(function.qualname)


def passed_parameter(node: cst.BaseExpression, ctx: RuleContext, items: bool = False) -> str | None:
    """The parameter of the compiled function that ``node`` reads as it came in, through
    arithmetic and one local alias: a Python value the caller chooses. With ``items``,
    `group["lr"]` counts as its parameter `group` (an optimizer's param group); without, an item
    of a parameter is taken for configuration (`block_size[0]`). None for a tensor, `self` and
    anything else."""
    kinds = ctx.kinds
    if kinds is None or ctx.is_tensor(node):
        return None
    pending = [node]
    for _ in range(16):  # a bounded look through arithmetic
        if not pending:
            return None
        value = pending.pop()
        if isinstance(value, _ARITHMETIC):
            pending.extend(_operands(value))
            continue
        if isinstance(value, cst.Subscript) and items:
            value = value.value
        if not isinstance(value, cst.Name):
            continue
        name = value.value
        if name in kinds.pristine:
            if ctx.kind_of(value) is not Kind.TENSOR and not _has_default(name, ctx):
                return name
            continue
        alias = ctx.assigned_value(value)
        if alias is not None and alias is not value:
            pending.append(alias)
    return None


def _has_default(name: str, ctx: RuleContext) -> bool:
    """A parameter with a default (`max_period=10000`) is most often configuration that callers
    leave alone; the numbers a loop changes are passed every call."""
    function = ctx.function
    param = function.parameter(name) if function is not None else None
    return param is not None and param.default is not None


def input_size(node: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """`x.shape[1]`, `x.size(1)`, `x.size()[1]`, `len(x)` or `x.shape[1] - 1` of a parameter `x`
    of the compiled function (not a weight or buffer: their sizes do not change): the
    parameter's name."""
    pending = [node]
    for _ in range(16):
        if not pending:
            return None
        value = pending.pop()
        if isinstance(value, _ARITHMETIC):
            pending.extend(_operands(value))
            continue
        if isinstance(value, cst.Name):
            alias = ctx.assigned_value(value)
            if alias is not None and alias is not value:
                pending.append(alias)
            continue
        owner = _sized(value, ctx)
        if owner is not None:
            return owner
    return None


def _sized(node: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """The parameter whose size ``node`` reads, where it reads one."""
    kinds = ctx.kinds
    if kinds is None:
        return None
    base: cst.BaseExpression | None = None
    if isinstance(node, cst.Subscript):
        node = node.value  # `x.shape[1]`, `x.size()[1]`
        if isinstance(node, cst.Call):
            node = node.func
        if isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size"):
            base = node.value
    elif isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "size" and node.args:
            base = func.value
        elif isinstance(func, cst.Name) and func.value == "len" and len(node.args) == 1:
            base = node.args[0].value
    if isinstance(base, cst.Name) and base.value in kinds.pristine:
        return base.value
    return None
