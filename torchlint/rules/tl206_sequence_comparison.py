from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from torchlint.parse.cst_walk import holds
from torchlint.report.diagnostic import Applicability
from torchlint.rules._eager_checks import eager_check
from torchlint.rules._side_effects import eager_only
from torchlint.rules._untraceable_values import value_before
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, enclosing_block
from torchlint.analysis.kind_vocabulary import Kind

_SYMBOLS = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}
_NOT_TENSORS = (Kind.PYTHON, Kind.SIZE, Kind.META, Kind.MODULE)
_EMPTY = cst.Module(body=[])
# A pair of elements known to differ: Dynamo has its answer before any tensor is reached.
_DECIDED = object()
_NOT_CONSTANT = object()


@dataclass(frozen=True)
class _Sequence:
    """A list or tuple side of a comparison, as far as the code shows it."""

    type: str  # "list" or "tuple" (a `torch.Size` is a tuple)
    items: tuple[cst.BaseExpression, ...] | None = None  # the elements written out, `*rest` left out
    placed: int = 0  # how many items come before the first `*rest`: their positions are known
    closed: bool = False  # no `*rest`: the length is known
    each: Kind = Kind.UNKNOWN  # what every element is, where they are not written out


_SIZES = _Sequence("tuple", each=Kind.SIZE)


def _literal(node: cst.List | cst.Tuple) -> _Sequence:
    items = tuple(e.value for e in node.elements if not isinstance(e, cst.StarredElement))
    placed = next((i for i, e in enumerate(node.elements) if isinstance(e, cst.StarredElement)), len(items))
    kind = "list" if isinstance(node, cst.List) else "tuple"
    return _Sequence(kind, items, placed, closed=len(items) == len(node.elements))


def _is_sizes(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """`t.shape`, `t.size()` and their slices: a `torch.Size`, whose elements are ints."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value == "size" and not node.args and ctx.kind_of(node.func.value) not in _NOT_TENSORS
    if isinstance(node, cst.Subscript):
        return all(isinstance(part.slice, cst.Slice) for part in node.slice) and _is_sizes(node.value, ctx)
    return False


def _sequence(node: cst.BaseExpression, ctx: RuleContext, depth: int = 0) -> _Sequence | None:
    if isinstance(node, (cst.List, cst.Tuple)):
        return _literal(node)
    if _is_sizes(node, ctx):
        return _SIZES
    if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].star and not node.args[0].keyword:
        name = ctx.qualified_name(node.func)
        if name in ("builtins.list", "builtins.tuple"):
            kind = name.removeprefix("builtins.")
            inner = node.args[0].value
            source = _sequence(inner, ctx, depth + 1)
            if source is not None:
                return replace(source, type=kind)
            # `list(t)` holds the tensor's rows.
            return _Sequence(kind, each=Kind.TENSOR) if ctx.is_tensor(inner) else None
    if isinstance(node, cst.Name) and depth < 3:
        value, _ = value_before(node, ctx)
        if value is not None:
            return _sequence(value, ctx, depth + 1)
    return None


def _constant(node: cst.BaseExpression) -> object:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = _constant(node.expression)
        return -value if isinstance(value, (int, float)) else _NOT_CONSTANT
    return _NOT_CONSTANT


def _kind(element: cst.BaseExpression | Kind, ctx: RuleContext) -> Kind:
    return element if isinstance(element, Kind) else ctx.kind_of(element)


def _compare_elements(a: cst.BaseExpression | Kind, b: cst.BaseExpression | Kind, ctx: RuleContext):
    """What Dynamo makes of `a == b` for two elements: the tensor it cannot decide on
    (`Kind.TENSOR` for an element not written out), `_DECIDED` when they differ at trace
    time, None when they may be equal."""
    if isinstance(a, cst.BaseExpression) and isinstance(b, cst.BaseExpression):
        if isinstance(a, cst.Name) and isinstance(b, cst.Name) and a.value == b.value:
            return None  # the same object: equal without comparing
        left, right = _constant(a), _constant(b)
        if left is not _NOT_CONSTANT and right is not _NOT_CONSTANT:
            return None if left == right else _DECIDED
        if isinstance(a, (cst.List, cst.Tuple)) and isinstance(b, (cst.List, cst.Tuple)):
            return _first_undecidable(_literal(a), _literal(b), cst.Equal(), ctx)
    kinds = (_kind(a, ctx), _kind(b, ctx))
    for (this, kind), other in (((a, kinds[0]), b), ((b, kinds[1]), a)):
        if kind in (Kind.TENSOR, Kind.SIZE) and _never_equal(other):
            return _DECIDED
        if kind is Kind.TENSOR:
            return this
    return None


def _never_equal(element: cst.BaseExpression | Kind) -> bool:
    """`t == None`, `t == "name"`, `n == None`: False at once for a tensor or a size."""
    return isinstance(element, cst.BaseExpression) and isinstance(_constant(element), (str, bytes, type(None)))


def _first_undecidable(left: _Sequence, right: _Sequence, operator: cst.BaseCompOp, ctx: RuleContext):
    """The element whose comparison Dynamo cannot decide while tracing, `_DECIDED` when
    the answer is known before one is reached, None when no tensor is reached."""
    if left.type != right.type:
        return None  # a list never equals a tuple
    if left.items is None and right.items is None:
        return None  # nothing written out to point at
    if left.items is not None and right.items is not None:
        lengths_differ = left.closed and right.closed and len(left.items) != len(right.items)
        if lengths_differ and isinstance(operator, (cst.Equal, cst.NotEqual)):
            return _DECIDED
        pairs = zip(left.items[: left.placed], right.items[: right.placed])
    elif left.items is not None:
        # Every element of the other side is alike: positions do not matter.
        pairs = ((item, right.each) for item in left.items)
    else:
        pairs = ((left.each, item) for item in right.items)
    for a, b in pairs:
        found = _compare_elements(a, b, ctx)
        if found is not None:
            return found
    return None


def _undecidable_element(
    left: cst.BaseExpression, operator: cst.BaseCompOp, right: cst.BaseExpression, ctx: RuleContext
) -> tuple[cst.BaseExpression, str] | None:
    """The tensor element that stops Dynamo in `left <operator> right` (or the side that
    holds it, where its elements are not written out: `list(t)`), and the sequences' type."""
    left_sequence = _sequence(left, ctx)
    right_sequence = _sequence(right, ctx) if left_sequence is not None else None
    if right_sequence is None:
        return None
    found = _first_undecidable(left_sequence, right_sequence, operator, ctx)
    if found is Kind.TENSOR:
        found = left if left_sequence.each is Kind.TENSOR else right
    return (found, left_sequence.type) if isinstance(found, cst.BaseExpression) else None


def _check_in_eager_mode(comparison: cst.Comparison, ctx: RuleContext) -> FixPlan | None:
    """The comparison tested by an `assert` on a line of its own, or by an `if` whose branches
    only report, goes under the `is_compiling()` guard with its check (unsafe: while compiling
    nothing is checked)."""
    statement, function = ctx.statement, ctx.function
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        check = statement.body[0]
        return eager_only(check, ctx) if isinstance(check, cst.Assert) and holds(check.test, {id(comparison)}) else None
    if not (isinstance(statement, cst.If) and function is not None and holds(statement.test, {id(comparison)})):
        return None
    if enclosing_block(statement, function.node) is None:
        return None  # an `elif`, or an `if` sharing a line
    return eager_check(statement, ctx)


class SequenceComparisonWithTensor(Rule):
    code = "TL206"
    name = "sequence-comparison-with-tensor"
    message = (
        "comparing lists or tuples that hold a tensor breaks the graph (the element comparison "
        "gives a tensor, so Dynamo cannot decide the result while tracing); compare sizes with "
        "Python ints and check the tensor with `torch._assert_async`"
    )
    suggestion = (
        "compare sizes with Python ints only (`list(s.size()) == [b * h, n, n]`), and check the "
        "tensor on the device: `torch._assert_async(s.size(1) == max_num, \"message\")`; compare "
        "tensors as one tensor: `(torch.stack([a, b]) == torch.stack([c, d])).all()`"
    )
    fixes = (Applicability.UNSAFE,)
    # torch 2.11 reports the same comparisons as data-dependent branching (GB0170).
    gb_ids = ("GB6622", "GB0170")
    gb_types = ("list_richcompare_nonconst", "Data-dependent branching")

    def visit_Comparison(self, node: cst.Comparison, ctx: RuleContext) -> None:
        # `a == b == c` compares `a == b`, then `b == c`.
        left = node.left
        for target in node.comparisons:
            right = target.comparator
            symbol = _SYMBOLS.get(type(target.operator))
            found = _undecidable_element(left, target.operator, right, ctx) if symbol is not None else None
            if found is not None:
                self._report(node, symbol, *found, ctx)
                return
            left = right

    def _report(
        self, node: cst.Comparison, symbol: str, element: cst.BaseExpression, kind: str, ctx: RuleContext
    ) -> None:
        shown = _EMPTY.code_for_node(element)
        message = (
            f"`{symbol}` between {kind}s that hold a tensor (`{shown}`) breaks the graph: the element "
            "comparison gives a tensor, so Dynamo cannot decide the result while tracing; compare sizes "
            "with Python ints and check the tensor with `torch._assert_async`"
        )
        ctx.report(type(self), node, message, fix=_check_in_eager_mode(node, ctx))

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.query = torch.nn.Linear(8, 8)
                self.key = torch.nn.Linear(8, 8)

            def forward(self, x):
                heads, seq, dim = 2, 2, 8
                q = self.query(x).view(heads, seq, dim)
                k = self.key(x).view(heads, seq, dim)
                is_global = torch.ones(heads, seq, dtype=torch.bool)
                max_num = is_global.sum(dim=-1).max()
                scores = torch.bmm(q, k.transpose(1, 2))
                assert list(scores.size()) == [heads, max_num, seq], "global attention has the wrong size"
                return scores.softmax(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(scores: torch.Tensor, is_global: torch.Tensor):
            batch, seq, _ = scores.shape
            max_num = is_global.sum(dim=-1).max()
            if list(scores.size()) != [batch, max_num, seq]:
                raise ValueError("wrong size")
            return scores.softmax(dim=-1)
        """,
    )

    valid = (
        """
        import torch


        @torch.compile
        def step(scores: torch.Tensor):
            batch, seq, _ = scores.shape
            assert list(scores.size()) == [batch, seq, seq], "wrong size"
            return scores.softmax(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(q: torch.Tensor, k: torch.Tensor):
            if q.shape == k.shape and q.shape[1:] == (4, 8):
                return q + k
            return q
        """,
    )
