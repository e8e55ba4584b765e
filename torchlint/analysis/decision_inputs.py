"""The calls whose results a file's decisions read.

A decision is where Python needs a tensor's value: the test of an `if`, `while`, `assert` or
conditional expression, an operand of `and`, `or` and `not`, a chained comparison, an index,
and what `int()`, `float()`, `bool()` and `range()` take; `len()` reads a size, not a value.
Followed back through assignments (`d = rms(x)`, `ok = d < 1e-5`, `if ok:`), the calls met on the way are the ones
whose kind can change a finding. The project tells a file what another file's function
returns only for those: telling it more changes nothing and costs a lint.

Each function is a scope of its own; a closure's reads of the function around it are not followed.
Only functions that call into the project are read: elsewhere no call's kind can be told, and
reading every function of every file costs more than the facts are worth.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.analysis.scopes import dotted_name

_CONVERSIONS = frozenset({"int", "float", "bool", "range"})
# Calls and attributes whose answer no tensor value decides.
_QUESTIONS = frozenset({"isinstance", "issubclass", "hasattr", "getattr", "callable", "type", "len", "id"})
_METADATA = frozenset(
    {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "training", "size", "dim", "numel", "ndimension"}
)


def decision_callees(scopes: Iterable[cst.CSTNode]) -> frozenset[str]:
    """The functions, as the file spells them (`rms`, `norms.rms`), whose results reach a
    decision in ``scopes`` (functions, or a module) and the functions defined in them."""
    callees: set[str] = set()
    pending = list(scopes)
    read: set[int] = set()
    while pending:
        scope = pending.pop()
        if id(scope) not in read:
            read.add(id(scope))
            callees |= _scope_callees(scope, pending)
    return frozenset(callees)


def _scope_callees(scope: cst.CSTNode, inner: list[cst.CSTNode]) -> set[str]:
    """What one function (or the module's own code) decides on; the functions defined in it
    are added to ``inner``, each a scope of its own."""
    decided: list[cst.CSTNode] = []
    # name -> the expressions assigned to it
    assigned: dict[str, list[cst.CSTNode]] = {}

    def bind(target: cst.BaseExpression, value: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            assigned.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                bind(element.value, value)
        elif isinstance(target, cst.StarredElement):
            bind(target.value, value)

    def visit(node: cst.CSTNode) -> bool | None:
        kind = type(node)
        if kind is cst.FunctionDef and node is not scope:
            inner.append(node)
            return True
        if kind in (cst.If, cst.While, cst.Assert, cst.IfExp):
            decided.append(node.test)
        elif kind is cst.BooleanOperation:
            decided.append(node.left)  # the right operand is only handed back
        elif kind is cst.UnaryOperation and type(node.operator) is cst.Not:
            decided.append(node.expression)
        elif kind is cst.Comparison and len(node.comparisons) > 1:
            decided.append(node)
        elif kind is cst.SubscriptElement:
            decided.append(node.slice)
        elif kind is cst.Call and type(node.func) is cst.Name and node.func.value in _CONVERSIONS:
            decided.extend(arg.value for arg in node.args)
        elif kind is cst.Assign:
            for target in node.targets:
                bind(target.target, node.value)
        elif kind in (cst.AnnAssign, cst.AugAssign) and node.value is not None:
            bind(node.target, node.value)
        elif kind is cst.NamedExpr:
            bind(node.target, node.value)
        elif kind in (cst.For, cst.CompFor):
            bind(node.target, node.iter)
        return None

    walk(scope, visit)

    callees: set[str] = set()
    seen: set[str] = set()
    pending = decided
    while pending:
        reached: list[cst.CSTNode] = []
        for root in pending:
            names, calls = _read_by(root)
            callees.update(calls)
            for name in names - seen:
                seen.add(name)
                reached.extend(assigned.get(name, ()))
        pending = reached
    return callees


def _read_by(root: cst.CSTNode) -> tuple[set[str], set[str]]:
    """The names whose values an expression reads, and the functions it calls, as spelled.
    What never depends on a tensor's values is left out: `is` tests, a tensor's shape,
    dtype or device, and `isinstance()`-like questions."""
    names: set[str] = set()
    calls: set[str] = set()

    def visit(node: cst.CSTNode) -> bool | None:
        kind = type(node)
        if kind is cst.Name:
            names.add(node.value)
        elif kind is cst.Comparison and all(type(c.operator) in (cst.Is, cst.IsNot) for c in node.comparisons):
            return True
        elif kind is cst.Call:
            func = node.func
            if type(func) is cst.Name and func.value in _QUESTIONS:
                return True
            if type(func) is cst.Attribute and func.attr.value in _METADATA:
                return True  # `x.size(0)`, `x.dim()`
            spelled = dotted_name(func)
            if spelled is not None:
                calls.add(spelled)
        elif kind is cst.Attribute:
            if node.attr.value in _METADATA:
                return True
            # `a.b.c` reads `a`; `b` and `c` are no names of the file's
            walk(node.value, visit)
            return True
        return None

    walk(root, visit)
    return names, calls
