from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands, single_index, walk
from torchlint.report.diagnostic import Applicability
from torchlint.rules._data_dependent import mark_condition, raises_only, truthiness_sites
from torchlint.rules._eager_checks import eager_check
from torchlint.rules.base import Rule
from torchlint.rules.branch_fixes import (
    assert_for_raise,
    cond_skeleton,
    number_literal,
    where_for_if,
    where_for_return,
    where_side_code,
    where_for_ternary,
)
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, enclosing_block

_WHERE = (
    "compute both sides and pick with `torch.where(cond, a, b)`, or use "
    "`torch.cond(cond, true_fn, false_fn, (x,))` when both branches are pure functions "
    "that return tensors of the same structure"
)
_ASSERT = "check on the device instead: `torch._assert_async(~cond, \"message\")`"
_WHILE = "use `torch.while_loop(cond_fn, body_fn, (x,))`, or a fixed number of steps with a mask"
_LOGICAL = "keep it a tensor: `a & b`, `a | b`, `~a` (or `torch.logical_and/or/not`)"
_CHAINED = "compare pair by pair and combine the tensors: `(a < b) & (b < c)`"
_ASSERT_LOGICAL = "assert one tensor: `assert a & b`, `assert ~a` (Dynamo turns only that into a graph check)"


def _bound(ctx: RuleContext) -> set[str]:
    """The names the current function has bound so far, its parameters included."""
    names = set(ctx.kinds.names) if ctx.kinds is not None else set()
    function = ctx.function
    if function is not None:
        params = function.node.params
        names.update(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))
    return names


def _assert_truth_sites(test: cst.BaseExpression, ctx: RuleContext):
    """The tensor-valued parts of an assert's test that Python tests before the final jump
    to the error: all of a `not`'s operand, and every `and`/`or` operand but the last."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from truthiness_sites(test.expression, ctx)
    elif isinstance(test, cst.BooleanOperation):
        yield from truthiness_sites(test.left, ctx)
        if not ctx.short_circuits(test):
            yield from _assert_truth_sites(test.right, ctx)


def _chain_asks_truth(node: cst.Comparison, ctx: RuleContext) -> bool:
    """A link of a chained comparison, before the last, compares a tensor's data."""
    operands = comparison_operands(node)
    for index, target in enumerate(node.comparisons[:-1]):
        if isinstance(target.operator, (cst.Is, cst.IsNot)):
            continue
        if isinstance(target.operator, (cst.In, cst.NotIn)):
            if ctx.is_tensor(operands[index + 1]):
                return True
        elif ctx.is_data_dependent(operands[index]) or ctx.is_data_dependent(operands[index + 1]):
            return True
    return False


_ORDERINGS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def _tensor_test(condition: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A condition `torch.where` takes as it is: a tensor comparison (`in` and `is` give
    Python booleans), or a tensor's `.any()` / `.all()`."""
    if not ctx.is_tensor(condition):
        return False
    if isinstance(condition, cst.Comparison):
        return all(isinstance(target.operator, _ORDERINGS) for target in condition.comparisons)
    return (
        isinstance(condition, cst.Call)
        and isinstance(condition.func, cst.Attribute)
        and condition.func.attr.value in ("any", "all")
        and not condition.args
    )


def _where_side(value: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A value `torch.where` can pick: a tensor, or a number, that only computes."""
    return (number_literal(value) or ctx.is_tensor(value)) and _pure(value, ctx)


# Calls that keep a tensor's shape (so both sides of `torch.where` broadcast as the branch
# did), as tensor methods or torch functions; and reductions to one value, without arguments.
_ELEMENTWISE = frozenset({
    "abs", "neg", "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "square", "reciprocal", "sign",
    "tanh", "sigmoid", "relu", "clamp", "clamp_min", "clamp_max", "clip", "floor", "ceil", "round", "trunc",
    "pow", "maximum", "minimum", "nan_to_num", "float", "double", "half", "detach", "clone",
})
_REDUCTIONS = frozenset({"max", "min", "amax", "amin", "sum", "mean", "norm", "std", "var", "prod"})


def _pure(value: cst.BaseExpression, ctx: RuleContext) -> bool:
    """Computing ``value`` changes nothing and keeps the shape a branch had: names,
    constants, operators, the element-wise functions and methods and argument-less
    reductions above, and reads of one item by a plain index; no other call."""
    return _only_computes(value, lambda call: _shape_keeping(call, ctx), lambda subscript: _one_item(subscript, ctx))


def _one_item(subscript: cst.Subscript, ctx: RuleContext) -> bool:
    """`t[i]`, `t[-1]`, `self.table[self.step]`: one index, not a slice nor a boolean mask.
    The read an index guard protects (`table[t] if t >= 0 else last`); with both sides
    computed, it is made on the side not taken too."""
    index = single_index(subscript)
    if index is None or (ctx.kinds is not None and ctx.kinds.is_mask(index)):
        return False
    if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus):
        index = index.expression
    while isinstance(index, cst.Attribute):
        index = index.value
    return isinstance(index, (cst.Name, cst.Integer))


def _only_computes(
    value: cst.BaseExpression, call_allowed: Callable[[cst.Call], bool], read_allowed: Callable[[cst.Subscript], bool]
) -> bool:
    """No part of ``value`` does anything but compute: each call is one ``call_allowed``
    accepts, each indexing one ``read_allowed`` accepts, and there is no lambda, await,
    yield, walrus or comprehension."""
    pure = True
    banned = (cst.Lambda, cst.Await, cst.Yield, cst.NamedExpr, cst.BaseComp)

    def visit(node: cst.CSTNode) -> bool | None:
        nonlocal pure
        if isinstance(node, banned):
            pure = False
        elif isinstance(node, cst.Call):
            pure = call_allowed(node)
        elif isinstance(node, cst.Subscript):
            pure = read_allowed(node)
        return None if pure else True

    walk(value, visit)
    return pure


def _torch_computation(call: cst.Call, ctx: RuleContext) -> bool:
    """A torch function or a tensor method that does not work in place (no trailing `_`)."""
    func = call.func
    name = ctx.qualified_name(func) or ""
    if name.startswith("torch."):
        return not name.endswith("_")
    return isinstance(func, cst.Attribute) and ctx.is_tensor(func.value) and not func.attr.value.endswith("_")


def _shape_keeping(call: cst.Call, ctx: RuleContext) -> bool:
    func = call.func
    name = ctx.qualified_name(func) or ""
    if name.startswith("torch.") and name.count(".") == 1:
        return name[len("torch."):] in _ELEMENTWISE
    if not (isinstance(func, cst.Attribute) and ctx.is_tensor(func.value)):
        return False
    method = func.attr.value
    return method in _ELEMENTWISE or (method in _REDUCTIONS and not call.args)


class TensorCondition(Rule):
    code = "TL201"
    name = "tensor-condition"
    message = "branching on a tensor's value breaks the graph (Dynamo cannot know which way it goes)"
    suggestion = _WHERE
    fixes = (Applicability.UNSAFE, Applicability.DISPLAY_ONLY)
    gb_ids = ("GB0170",)
    gb_types = ("Data-dependent branching",)

    def _report(
        self, condition: cst.BaseExpression, what: str, suggestion: str, ctx: RuleContext,
        fix: Callable[[bool], FixPlan | None] = lambda whole: None,
    ) -> None:
        """``fix`` is told whether the whole condition is the one place Python asks for a
        tensor's truth (so that `torch.where` can take it as it is)."""
        mark_condition(condition, ctx)
        sites = list(truthiness_sites(condition, ctx))
        ctx.handled.update(id(site) for site in sites)
        for site in sites:
            value = "a tensor value" if ctx.is_tensor(site) else "a number captured from a tensor's data"
            message = f"{what} on {value} breaks the graph (Dynamo cannot know which way it goes)"
            plan = fix(sites == [condition] and _tensor_test(condition, ctx))
            ctx.report(type(self), site, message, suggestion, fix=plan)

    def visit_If(self, node: cst.If, ctx: RuleContext) -> None:
        def fix(whole: bool) -> FixPlan | None:
            module, function = ctx.summary.module, ctx.function

            def takes(value: cst.BaseExpression) -> bool:
                return _where_side(value, ctx)

            def side_code(value: cst.BaseExpression) -> str:
                return where_side_code(value, module, node.test, ctx.is_tensor)

            if function is None or enclosing_block(node, function.node) is None:
                return None  # an `elif`, or an `if` sharing a line
            if not whole:
                return eager_check(node, ctx)
            return (
                where_for_if(node, module, _bound(ctx), takes, side_code)
                or where_for_return(node, module, function.node, takes, side_code)
                or assert_for_raise(node, module)
                or eager_check(node, ctx)
                or cond_skeleton(node, module, ctx.is_tensor, lambda value: _only_computes(
                    value, lambda call: _torch_computation(call, ctx), lambda subscript: True))
            )

        self._report(node.test, "`if`", _ASSERT if raises_only(node.body) else _WHERE, ctx, fix)

    def visit_While(self, node: cst.While, ctx: RuleContext) -> None:
        self._report(node.test, "`while`", _WHILE, ctx)

    def visit_IfExp(self, node: cst.IfExp, ctx: RuleContext) -> None:
        def fix(whole: bool) -> FixPlan | None:
            if not whole:
                return None
            module = ctx.summary.module
            return where_for_ternary(node, module, lambda value: _where_side(value, ctx),
                                     lambda value: where_side_code(value, module, node.test, ctx.is_tensor))

        self._report(node.test, "a conditional expression", "`torch.where(cond, a, b)`", ctx, fix)

    def visit_Assert(self, node: cst.Assert, ctx: RuleContext) -> None:
        # A plain `assert t` traces (Dynamo makes it a graph check); TL204 handles one with a
        # formatted message. Only the last jump before the error is rewritten so: the
        # operands `and`/`or` test first, and whatever `not` negates, are asked for their truth.
        mark_condition(node.test, ctx)
        for site in _assert_truth_sites(node.test, ctx):
            message = "`and`/`or`/`not` in an `assert` on a tensor value breaks the graph (Python asks for its truth value)"
            ctx.report(type(self), site, message, _ASSERT_LOGICAL)

    def visit_Comparison(self, node: cst.Comparison, ctx: RuleContext) -> None:
        # `a < b < c` asks for the truth of `a < b` before it goes on to `b < c`.
        if id(node) in ctx.handled or not _chain_asks_truth(node, ctx):
            return
        message = "a chained comparison on a tensor value breaks the graph (Python asks for the truth of each link but the last)"
        ctx.report(type(self), node, message, _CHAINED)

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx: RuleContext) -> None:
        if id(node) in ctx.handled:
            return
        mark_condition(node, ctx)
        # `a and b` asks for the truth of `a`; `b` is only handed back.
        for site in truthiness_sites(node.left, ctx):
            ctx.handled.add(id(site))
            message = "`and`/`or` on a tensor value breaks the graph (Python asks for its truth value)"
            ctx.report(type(self), site, message, _LOGICAL)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx: RuleContext) -> None:
        if id(node) in ctx.handled or not isinstance(node.operator, cst.Not):
            return
        mark_condition(node, ctx)
        for site in truthiness_sites(node.expression, ctx):
            ctx.handled.add(id(site))
            message = "`not` on a tensor value breaks the graph (Python asks for its truth value)"
            ctx.report(type(self), site, message, _LOGICAL)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                if y.abs().max() > 1.0:
                    y = y / y.abs().max()
                return torch.tanh(y)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x.abs() + 0.1
            while y.sum() < 100:
                y = y * 2
            return y
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            a, b = x.chunk(2, dim=-1)
            z = a if a.mean() > 0 else -a
            ok = (a.sum() > 0) and (b.mean() < 10)
            return z * ok
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                peak = y.abs().max()
                y = torch.where(peak > 1.0, y / peak, y)
                return torch.tanh(y)
        """,
        """
        import torch
        import torch.nn.functional as F


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
                if x.shape[0] > 2 and x.dtype == torch.float32:
                    x = x * 2
                y = self.proj(x)
                if self.training:
                    y = F.dropout(y, 0.1)
                if mask is not None:
                    y = y * mask
                return y
        """,
    )
