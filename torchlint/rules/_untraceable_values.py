"""What the TL5xx value rules share: what a name held before this statement, what the
items of an iterable are, and names bound for a moment (a lambda's parameter).

`ctx.assigned_value` gives a name's last assignment anywhere in its scope; in
`rows = sorted(rows, key=...)` that is the `sorted` call itself. These rules ask for the
assignment that ran before the statement being checked instead.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

from torchlint.parse.cst_walk import nested_blocks
from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

_MAX_DEPTH = 6
_SEQUENCE_TYPES = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "Iterable", "MutableSequence"})
_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.nn.Parameter"})
# Calls that hand back the items of their first argument.
_SAME_ITEMS = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted", "builtins.reversed"})


def autograd_ops_traced(ctx: RuleContext) -> bool:
    """`torch._dynamo.config.trace_autograd_ops = True` in the project's code or config."""
    return ctx.profile.trace_autograd_ops


# -- what a name held ---------------------------------------------------------------

class _NameAssignments:
    """One name's assignments in statement order, searchable by position: a name
    reassigned on every line of a long function must not cost a scan per lookup."""

    def __init__(self) -> None:
        self.orders: list[int] = []
        self.assignments: list[tuple[cst.BaseExpression, cst.CSTNode]] = []

    def add(self, order: int, value: cst.BaseExpression, statement: cst.CSTNode) -> None:
        self.orders.append(order)
        self.assignments.append((value, statement))

    def last_before(self, limit: int) -> tuple[cst.BaseExpression | None, cst.CSTNode | None]:
        at = bisect.bisect_left(self.orders, limit)
        return self.assignments[at - 1] if at else (None, None)


@functools.lru_cache(maxsize=32)
def _assignments(function: cst.FunctionDef) -> tuple[dict[int, int], dict[str, _NameAssignments]]:
    """The function's statements numbered in source order, and its `name = value`
    assignments by name. Worked out once per function: rules ask for many names."""
    order: dict[int, int] = {}
    by_name: dict[str, _NameAssignments] = {}

    def run(suite: cst.BaseSuite) -> None:
        statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
        for statement in statements:
            index = order[id(statement)] = len(order)
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                found = by_name.setdefault(target.target.value, _NameAssignments())
                                found.add(index, small.value, statement)
            elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                for block in nested_blocks(statement):
                    run(block)

    run(function.body)
    return order, by_name


def value_before(
    node: cst.BaseExpression, ctx: RuleContext, stop: cst.CSTNode | None = None
) -> tuple[cst.BaseExpression | None, cst.CSTNode | None]:
    """What a local name was last assigned before ``stop`` (the current statement by
    default), in source order, with the assigning statement; for a module global or
    `self.<attr>`, what it was assigned."""
    if isinstance(node, cst.Name) and ctx.function is not None and node.value in ctx.function.scope.bindings:
        order, by_name = _assignments(ctx.function.node)
        found = by_name.get(node.value)
        if found is None:
            return None, None
        return found.last_before(order.get(id(stop or ctx.statement), len(order)))
    if isinstance(node, (cst.Name, cst.Attribute)):
        return ctx.assigned_value(node), None
    return None, None


# -- the items of an iterable -------------------------------------------------------


@contextmanager
def bound(ctx: RuleContext, kinds: dict[str, Kind]) -> Iterator[None]:
    """Names holding the given kinds while the block runs (a lambda's or a
    comprehension's own names), as they were afterwards."""
    env = ctx.kinds
    if env is None:
        yield
        return
    saved = {name: env.names[name] for name in kinds if name in env.names}
    env.names.update(kinds)
    try:
        yield
    finally:
        for name in kinds:
            env.names.pop(name, None)
        env.names.update(saved)


def _names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)


def _annotation_items(annotation: cst.BaseExpression, ctx: RuleContext) -> Kind:
    """`list[torch.Tensor]`, `Sequence[Tensor]`, `tuple[Tensor, ...]`: tensors."""
    if not isinstance(annotation, cst.Subscript) or not annotation.slice:
        return Kind.UNKNOWN
    container = ctx.qualified_name(annotation.value) or ""
    inner = annotation.slice[0].slice
    if container.rsplit(".", 1)[-1] in _SEQUENCE_TYPES and isinstance(inner, cst.Index):
        if ctx.qualified_name(inner.value) in _TENSOR_ANNOTATIONS:
            return Kind.TENSOR
    return Kind.UNKNOWN


def _parameter_items(name: cst.Name, ctx: RuleContext) -> Kind:
    function = ctx.function.node if ctx.function is not None else None
    if function is None:
        return Kind.UNKNOWN
    params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
    for param in params:
        if param.name.value == name.value and param.annotation is not None:
            return _annotation_items(param.annotation.annotation, ctx)
    return Kind.UNKNOWN


def _comprehension_items(
    node: cst.ListComp | cst.GeneratorExp | cst.SetComp, ctx: RuleContext, depth: int, stop
) -> Kind:
    names: dict[str, Kind] = {}
    clause = node.for_in
    while clause is not None:
        each = item_kind(clause.iter, ctx, depth + 1, stop)
        names.update((name, each) for name in _names(clause.target))
        clause = clause.inner_for_in
    with bound(ctx, names):
        return ctx.kind_of(node.elt)


def item_kind(node: cst.BaseExpression, ctx: RuleContext, depth: int = 0, stop: cst.CSTNode | None = None) -> Kind:
    """The kind of the items iterating ``node`` gives: TENSOR for a tensor's rows, a
    list of tensors, `x.unbind(0)`; UNKNOWN without evidence. Names are looked up as they
    were before ``stop`` (the current statement by default)."""
    if depth > _MAX_DEPTH:
        return Kind.UNKNOWN
    if ctx.kind_of(node) is Kind.TENSOR:
        return Kind.TENSOR  # rows of a tensor; `chunk`/`unbind`/`split` give tensors too
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        kinds = {
            item_kind(e.value, ctx, depth + 1, stop) if isinstance(e, cst.StarredElement) else ctx.kind_of(e.value)
            for e in node.elements
        }
        return Kind.TENSOR if kinds == {Kind.TENSOR} else Kind.UNKNOWN
    if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return _comprehension_items(node, ctx, depth, stop)
    if isinstance(node, cst.Call):
        args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if ctx.qualified_name(node.func) in _SAME_ITEMS and args:
            return item_kind(args[0], ctx, depth + 1, stop)
        return Kind.UNKNOWN
    if isinstance(node, (cst.Name, cst.Attribute)):
        value, statement = value_before(node, ctx, stop)
        if value is not None:
            return item_kind(value, ctx, depth + 1, statement or stop)
        if isinstance(node, cst.Name):
            return _parameter_items(node, ctx)
    return Kind.UNKNOWN
