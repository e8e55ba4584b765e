"""What the recompile rules about call sites and setup code (TL705-TL707, TL709, TL711) see of
the code around compiled functions: what a file compiles and under which name, the calls made
to those names, and the statements of a scope in order with the loops each runs in.

Calls come from the summary; only statements are walked to put things in order, and only in
the scopes a rule has a candidate in, so a file that compiles nothing costs a scan of its calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from torchlint.analysis.regions import COMPILE_FUNCTIONS, CallIndex
from torchlint.analysis.scopes import Scope, lookup_scope, qualified_name
from torchlint.analysis.summary import FileSummary, FunctionInfo, target_names
from torchlint.parse.cst_walk import compound_headers, parent_map, walk
from torchlint.verify.targets import TARGETS_FUNCTION

# The last part of every name that may compile (`torch.compile`, `optimize`, `model.compile`):
# tested before any name is resolved.
_COMPILE_WORDS = frozenset({"compile", "optimize"})
# `model.to(device).compile()` is still `model`.
RETURNS_SELF = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16", "requires_grad_"})
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
Loop = cst.For | cst.While


@dataclass(frozen=True)
class CompileSite:
    """A place the file compiles something: `@torch.compile`, `torch.compile(x)`, `x.compile()`."""

    node: cst.CSTNode  # the decorator or the call
    scope: Scope  # the scope the site is in
    function: FunctionInfo | None  # the function the site is in; None at module level
    # what is compiled, as written: `model` of `torch.compile(model)`; None for a decorator
    target: cst.BaseExpression | None
    # the name the compiled callable is called by: `step` of `step = torch.compile(f)`, the
    # decorated function's, the module's of `model.compile()`; None where it has none
    bound: str | None
    # the function of this file that runs compiled (a module's `forward`), where known
    runs: FunctionInfo | None
    in_place: bool = False  # `model.compile()`


def _last_name(func: cst.BaseExpression) -> str | None:
    if type(func) is cst.Attribute:
        return func.attr.value
    if type(func) is cst.Name:
        return func.value
    return None


_memo: tuple[FileSummary | None, list[CompileSite]] = (None, [])


def compile_sites(summary: FileSummary, index: CallIndex) -> list[CompileSite]:
    """Every compile site of the file (found once per file: several rules ask)."""
    global _memo
    if _memo[0] is summary:
        return _memo[1]
    found = [*_decorated(summary), *_called(summary, index)]
    _memo = (summary, found)
    return found


def _decorated(summary: FileSummary) -> Iterable[CompileSite]:
    for function in summary.functions:
        for decorator in function.node.decorators if function.lambda_node is None else ():
            expression = decorator.decorator
            func = expression.func if type(expression) is cst.Call else expression
            if _last_name(func) in _COMPILE_WORDS and qualified_name(func, function.enclosing) in COMPILE_FUNCTIONS:
                yield CompileSite(decorator, function.enclosing, function.parent, None, function.name, function)


def _called(summary: FileSummary, index: CallIndex) -> Iterable[CompileSite]:
    for call, scope, function in summary.calls:
        func = call.func
        if _last_name(func) not in _COMPILE_WORDS:
            continue
        name = qualified_name(func, scope)
        if name in COMPILE_FUNCTIONS:
            if not call.args or call.args[0].keyword is not None or call.args[0].star:
                continue
            target = call.args[0].value
            runs = index.compile_target(target, function, scope)
            bound = next((n for n, value in scope.assignments.items() if value is call), None)
            yield CompileSite(call, scope, function, target, bound, runs if isinstance(runs, FunctionInfo) else None)
        elif name is None and type(func) is cst.Attribute and func.attr.value == "compile":
            # `model.compile()`: nn.Module.compile compiles the module in place.
            target = func.value
            instance = index.instance_class(target, function, scope)
            runs = index.instance_call(instance) if instance is not None and not isinstance(instance, str) else None
            bound = target.value if type(target) is cst.Name else None
            yield CompileSite(
                call, scope, function, target, bound, runs if isinstance(runs, FunctionInfo) else None, in_place=True
            )


@dataclass(frozen=True)
class CompiledCall:
    """A call, by its name, of a callable the file compiles; or a verify target's
    `yield step, (x, tag)`, which verify calls compiled."""

    node: cst.CSTNode  # the call, or the yielded tuple
    args: tuple[cst.Arg, ...]
    scope: Scope
    function: FunctionInfo | None
    site: CompileSite


def compiled_calls(summary: FileSummary, sites: list[CompileSite]) -> list[CompiledCall]:
    """The calls `name(...)` of the names compiled callables are bound to, where the name
    resolves to the binding the compile made."""
    by_name = {(id(site.scope), site.bound): site for site in sites if site.bound is not None}
    if not by_name:
        return []
    names = {name for _, name in by_name}
    found = []
    for call, scope, function in summary.calls:
        func = call.func
        if type(func) is not cst.Name or func.value not in names:
            continue
        owner = lookup_scope(scope, func.value)
        site = by_name.get((id(owner), func.value)) if owner is not None else None
        if site is not None:
            found.append(CompiledCall(call, tuple(call.args), scope, function, site))
    return found


def target_calls(summary: FileSummary, index: CallIndex) -> list[CompiledCall]:
    """In a file that declares verify targets, each `yield fn, (args...)` of a generator: verify
    compiles `fn` and calls it with those arguments, one call per yield, so the generator's loop
    is the loop a training script would run."""
    if summary.local_function(TARGETS_FUNCTION, summary.scope) is None:
        return []
    found = []
    for function in summary.functions:
        if function.lambda_node is not None:
            continue

        def visit(node: cst.CSTNode, function: FunctionInfo = function) -> bool | None:
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not function.node:
                return True
            if isinstance(node, cst.Yield) and isinstance(node.value, cst.Tuple):
                call = _yielded_call(node.value, function, index)
                if call is not None:
                    found.append(call)
            return None

        walk(function.node.body, visit)
    return found


def _yielded_call(value: cst.Tuple, function: FunctionInfo, index: CallIndex) -> CompiledCall | None:
    """`fn, (x, tag)` (or with a kwargs dict) as a compiled call of `fn`."""
    elements = [element.value for element in value.elements]
    if len(elements) not in (2, 3) or not isinstance(elements[1], cst.Tuple):
        return None
    target = elements[0]
    runs = index.compile_target(target, function, function.scope)
    if not isinstance(runs, FunctionInfo):
        return None
    args = [cst.Arg(value=element.value) for element in elements[1].elements if not isinstance(element, cst.StarredElement)]
    if len(elements) == 3 and isinstance(elements[2], cst.Dict):
        args += [
            cst.Arg(value=item.value, keyword=cst.Name(item.key.evaluated_value))
            for item in elements[2].elements
            if isinstance(item, cst.DictElement) and isinstance(item.key, cst.SimpleString)
            and isinstance(item.key.evaluated_value, str) and item.key.evaluated_value.isidentifier()
        ]
    bound = target.value if isinstance(target, cst.Name) else _last_name(target)
    site = CompileSite(value, function.scope, function, target, bound, runs)
    return CompiledCall(value, tuple(args), function.scope, function, site)


def body_of(function: FunctionInfo | None, summary: FileSummary) -> cst.Module | cst.BaseSuite:
    return summary.module if function is None else function.node.body


# -- statements in order ---------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """Where a node is among its scope's statements."""

    order: int
    loops: tuple[Loop, ...]  # the loops of the scope it runs in, outermost first
    statement: cst.CSTNode


class ScopeOrder:
    """The statements of one scope's body in source order, into compound statements but not into
    the functions and classes defined there, each with the loops it runs in."""

    def __init__(self, body: cst.Module | cst.BaseSuite) -> None:
        # (statement, the parts of it that are this statement's own code, its loops)
        self.entries: list[tuple[cst.CSTNode, list[cst.CSTNode], tuple[Loop, ...]]] = []
        # id(loop) -> (first, last) order of the statements it holds, itself included
        self.spans: dict[int, tuple[int, int]] = {}
        self._rebound: dict[int, set[str]] = {}
        pending: list[tuple[cst.CSTNode, tuple[Loop, ...]] | Loop] = [(body, ())]
        while pending:
            item = pending.pop()
            if isinstance(item, (cst.For, cst.While)):  # the marker after a loop's statements
                self.spans[id(item)] = (self.spans[id(item)][0], len(self.entries) - 1)
                continue
            node, loops = item
            if isinstance(node, (cst.Module, cst.IndentedBlock)):
                pending.extend((child, loops) for child in reversed(node.body))
                continue
            # `if c: x()` puts its body on its own line: a suite of simple statements.
            if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                self.entries.append((node, [node], loops))
                continue
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                # Its decorators (and a class's bases) run here; its body is a scope of its own.
                parts = [d.decorator for d in node.decorators]
                if isinstance(node, cst.ClassDef):
                    parts += [arg.value for arg in node.bases]
                self.entries.append((node, parts, loops))
                continue
            parts = compound_headers(node) or ([node.test] if isinstance(node, cst.If) else [])
            self.entries.append((node, parts, loops))
            inner = loops
            if isinstance(node, (cst.For, cst.While)):
                inner = (*loops, node)
                self.spans[id(node)] = (len(self.entries) - 1, -1)
                pending.append(node)
            pending.extend((block, inner) for block in reversed(_blocks(node)))

    def place(self, nodes: Iterable[cst.CSTNode]) -> dict[int, Placed]:
        """id(node) -> where it is, for the nodes of ``nodes`` that are this scope's code."""
        wanted = {id(node) for node in nodes}
        found: dict[int, Placed] = {}
        here: list[Placed] = []  # the statement being walked

        def visit(node: cst.CSTNode) -> bool | None:
            if id(node) in wanted:
                found[id(node)] = here[0]
            return None

        for order, (statement, parts, loops) in enumerate(self.entries):
            if len(found) == len(wanted):
                break
            here[:] = [Placed(order, loops, statement)]
            for part in parts:
                walk(part, visit)
        return found

    def in_loop(self, placed: Placed, loop: Loop) -> bool:
        first, last = self.spans[id(loop)]
        return first <= placed.order <= last

    def rebound(self, loop: Loop) -> set[str]:
        """The names a loop gives a new value on each pass: its target, and what its body assigns."""
        known = self._rebound.get(id(loop))
        if known is not None:
            return known
        names = set(target_names(loop.target)) if isinstance(loop, cst.For) else set()
        first, last = self.spans[id(loop)]
        for statement, _, _ in self.entries[first + 1 : last + 1]:
            names |= _bound_by(statement)
        self._rebound[id(loop)] = names
        return names

    def assigned_in(self, loop: Loop) -> set[str]:
        """The names the loop's body assigns afresh (`xs = []`), not those it only adds to."""
        first, last = self.spans[id(loop)]
        names: set[str] = set()
        for statement, _, _ in self.entries[first + 1 : last + 1]:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            names.update(target_names(target.target))
        return names

    def statements_in(self, loop: Loop) -> list[cst.CSTNode]:
        first, last = self.spans[id(loop)]
        return [statement for statement, _, _ in self.entries[first + 1 : last + 1]]


class ScopeOrders:
    """Each scope's `ScopeOrder`, made when first asked for."""

    def __init__(self, summary: FileSummary) -> None:
        self.summary = summary
        self._made: dict[int, ScopeOrder] = {}

    def of(self, function: FunctionInfo | None) -> ScopeOrder:
        key = id(function)
        order = self._made.get(key)
        if order is None:
            order = self._made[key] = ScopeOrder(body_of(function, self.summary))
        return order


def _blocks(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The blocks of a compound statement, an `elif` as a statement of its own."""
    found: list[cst.CSTNode] = []
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        found.append(body)
    for handler in getattr(node, "handlers", ()):
        found.append(handler.body)
    orelse = getattr(node, "orelse", None)
    if isinstance(orelse, cst.If):
        found.append(orelse)
    elif orelse is not None:
        found.append(orelse.body)
    final = getattr(node, "finalbody", None)
    if final is not None:
        found.append(final.body)
    for case in getattr(node, "cases", ()):
        found.append(case.body)
    return found


def _bound_by(statement: cst.CSTNode) -> set[str]:
    """The names one statement binds (its small statements' targets, a loop's or `with`'s)."""
    names: set[str] = set()
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names.update(target_names(target.target))
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                names.update(target_names(small.target))
    elif isinstance(statement, cst.For):
        names.update(target_names(statement.target))
    elif isinstance(statement, cst.With):
        for item in statement.items:
            if item.asname is not None and isinstance(item.asname.name, cst.BaseExpression):
                names.update(target_names(item.asname.name))
    return names


def changing_names(order: ScopeOrder, placed: Placed, node: cst.CSTNode) -> set[str]:
    """The names that take a new value between two runs of ``node``: what its loops rebind, and
    the targets of the comprehensions it is in. Empty where it runs once."""
    names: set[str] = set()
    for loop in placed.loops:
        names |= order.rebound(loop)
    parents = parent_map(placed.statement)
    current = parents.get(id(node))
    while current is not None:
        if isinstance(current, _COMPREHENSIONS):
            comp_for: cst.CompFor | None = current.for_in
            while comp_for is not None:
                names.update(target_names(comp_for.target))
                comp_for = comp_for.inner_for_in
        current = parents.get(id(current))
    return names


def mentions(node: cst.CSTNode, names: set[str]) -> bool:
    """Whether ``node`` reads one of ``names``."""
    if not names:
        return False
    found = False

    def visit(child: cst.CSTNode) -> bool | None:
        nonlocal found
        if type(child) is cst.Name and child.value in names:
            found = True
        return True if found else None

    walk(node, visit)
    return found


# -- what a compiled function does with a parameter --------------------------------------------


def parameter_for(runs: FunctionInfo, slot: int | str) -> str | None:
    """The parameter of ``runs`` a positional (a number) or keyword argument fills."""
    params = runs.node.params
    if isinstance(slot, int):
        positional = runs.positional
        if slot < len(positional):
            return positional[slot].name.value
        star = params.star_arg
        return star.name.value if isinstance(star, cst.Param) else None
    if runs.parameter(slot) is not None:
        return slot
    return params.star_kwarg.name.value if params.star_kwarg is not None else None


def star_parameter(runs: FunctionInfo) -> str | None:
    star = runs.node.params.star_arg
    return star.name.value if isinstance(star, cst.Param) else None


def reads(runs: FunctionInfo, parameter: str) -> list[cst.Name]:
    """Where the body of ``runs`` reads ``parameter`` so that Dynamo guards on its value: every
    read but `isinstance(p, ...)` and a hand-over to a function that may ignore it (one not of
    torch or the builtins). In source order."""
    passed_on: set[int] = set()
    found: list[cst.Name] = []
    scope = runs.scope

    def visit(node: cst.CSTNode) -> bool | None:
        if type(node) is cst.Call and _may_ignore_arguments(node.func, scope, runs):
            passed_on.update(id(arg.value) for arg in node.args if type(arg.value) is cst.Name)
        elif type(node) is cst.Name and node.value == parameter and id(node) not in passed_on:
            found.append(node)
        elif type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return True  # their own scopes
        return None

    walk(runs.node.body, visit)
    return found


def _may_ignore_arguments(func: cst.BaseExpression, scope: Scope, runs: FunctionInfo) -> bool:
    """A call that may do nothing with what it is handed: a function other than torch's and the
    builtins (`isinstance` looks at the type only), or a method of the module itself. A method of
    a value (`table.get(name)`) reads it."""
    if type(func) is cst.Attribute:
        base = func.value
        if type(base) is cst.Name and base.value == runs.self_name:
            return True
    elif type(func) is not cst.Name:
        return False
    name = qualified_name(func, scope)
    if name is None:
        return type(func) is cst.Name
    return name == "builtins.isinstance" or not name.startswith(("torch.", "builtins."))
