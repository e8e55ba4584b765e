"""What the dynamic-output-shape rules (TL4xx) share."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.rules._tensor_methods import tensor_method, torch_function
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan

CAPTURE_HINT = "or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True`"


def calls_op(node: cst.Call, names: frozenset[str], ctx: RuleContext) -> str | None:
    """`torch.<op>(t, ...)` or `t.<op>(...)` for one of ``names``, unless the profile captures them."""
    if ctx.dynamic_shapes_captured:
        return None
    return torch_function(node, names, ctx) or tensor_method(node, names, ctx)


def report_dynamic_op(
    rule: type,
    node: cst.Call,
    names: frozenset[str],
    ctx: RuleContext,
    fix_for: Callable[[cst.Call, RuleContext], FixPlan | None] | None = None,
) -> None:
    """Report ``node`` for ``rule`` when it calls one of ``names``, naming the op as spelled,
    with the fix ``fix_for`` finds."""
    op = calls_op(node, names, ctx)
    if op:
        message = f"`{op}()` has an output size that depends on the data, which breaks the graph"
        ctx.report(rule, node, message, fix=fix_for(node, ctx) if fix_for is not None else None)
