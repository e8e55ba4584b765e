"""Methods called on an object that the compiled function builds itself.

`solver = Solver(y0)` then `solver.integrate(t)`, or `Filter(config).apply(x)`: Dynamo
inlines the method with the object as a value it made while tracing. When the method
breaks the graph, Dynamo must rebuild the bound method in bytecode to run it after the
break, has no way to rebuild one of an object it made, and skips the whole function
(Reconstruction failure). An object passed in, or kept on `self`, has a source and
resumes as an ordinary break.
"""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.analysis.regions import NAME, CallIndex, Ref
from torchlint.analysis.scopes import lookup_scope
from torchlint.analysis.summary import ClassInfo, FunctionInfo, target_names


class BuiltObjectCall(NamedTuple):
    # what the project knows the method by: a function of this file (its qualified name),
    # `<class as imported>.<method>`, or `<table>[...].<method>`
    key: str
    # what the call may run: methods of this file, or Refs the project resolves (a class
    # imported, a base in another file, the entries of a dispatch table)
    methods: tuple[FunctionInfo | Ref, ...]
    # the class as the code names it, for messages
    class_name: str


def built_object_call(call: cst.Call, function: FunctionInfo, index: CallIndex) -> BuiltObjectCall | None:
    """``call`` when it calls a method of an object ``function`` builds, else None."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    receiver = func.value
    if type(receiver) is cst.Name:
        scope = function.scope
        value = scope.assignments.get(receiver.value)
        if type(value) is not cst.Call or lookup_scope(scope, receiver.value) is not scope:
            return None
    elif type(receiver) is cst.Call:
        value = receiver
    else:
        return None
    attr = func.attr.value
    if attr.startswith("__"):
        return None
    found = _built_method(value, func, attr, function, index)
    # Counting the name's bindings walks the function: only for what builds an object.
    if found is not None and type(receiver) is cst.Name and _bindings(receiver.value, function) != 1:
        return None
    return found


def _built_method(
    value: cst.Call, func: cst.Attribute, attr: str, function: FunctionInfo, index: CallIndex
) -> BuiltObjectCall | None:
    """What calling ``attr`` on the object ``value`` builds runs."""
    if type(value.func) is cst.Subscript and type(value.func.value) is cst.Name:
        # `solver = SOLVERS[method](...)`: the entries' methods
        table = value.func.value.value
        entries = index.dispatched(func, function) if func.value is not value else None
        if not entries:
            return None
        return BuiltObjectCall(f"{table}[...].{attr}", tuple(target for target, _ in entries), f"{table}[...]")
    cls = index.class_of(value.func, function.scope)
    if cls is None:
        return None
    if isinstance(cls, ClassInfo):
        method = index.method(cls, attr)
        if method is None:
            return None
        key = method.qualname if isinstance(method, FunctionInfo) else f"{cls.qualname}.{attr}"
        return BuiltObjectCall(key, (method,), cls.qualname)
    key = f"{cls}.{attr}"
    return BuiltObjectCall(key, (Ref(NAME, key),), cls.rpartition(".")[2])


_BINDING_STATEMENTS = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName})


def _bindings(name: str, function: FunctionInfo) -> int:
    """How many statements of the function bind ``name``: with more than one, the object a
    call meets depends on the path taken (`out = self.likelihood(x)`, then
    `if nan: out = MultivariateNormal(...)`), and the name's last assignment says nothing."""
    count = 0

    def visit(node: cst.CSTNode) -> bool | None:
        nonlocal count
        kind = type(node)
        if kind is cst.FunctionDef and node is not function.node or kind is cst.ClassDef or kind is cst.Lambda:
            return True
        if kind in _BINDING_STATEMENTS:
            count += sum(bound == name for target in _bound_targets(node) for bound in target_names(target))
        return None

    walk(function.node.body, visit)
    return count


def _bound_targets(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """What one of the binding statements binds to."""
    if isinstance(statement, cst.Assign):
        return [t.target for t in statement.targets]
    if isinstance(statement, cst.AsName):
        return [statement.name]
    if isinstance(statement, (cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        return [statement.target]
    return []
