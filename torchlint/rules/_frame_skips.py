"""Where a graph break makes Dynamo give up on the whole function (TL6xx).

Dynamo resumes after an ordinary break in a new graph. It cannot resume inside a
`for`/`while` body, a `try` body, or a `with` block whose context manager it does not
model (a class with `__enter__`, a `@contextmanager` generator): there it skips the whole
frame and the function runs eagerly. The grad-mode, autocast and profiler context
managers are modelled, so a break under them is an ordinary one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar, cast

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.analysis.conditions import Breaks
from torchlint.analysis.regions import Ref
from torchlint.rules.base import MetBreak
from torchlint.rules.context import BreakMet, Finding, RuleContext
from torchlint.analysis.scopes import dotted_name, qualified_name
from torchlint.analysis.summary import FunctionInfo

# Families whose findings are graph breaks.
_BREAK_FAMILIES = ("TL1", "TL2", "TL3", "TL4", "TL5")
_CONTEXT_MANAGER_DECORATORS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})


def _unmodelled_context_manager(block: cst.With, ctx: RuleContext) -> bool:
    """A `with` whose context manager is this file's own class or `@contextmanager` function."""
    for item in block.items:
        expression = item.item
        if not isinstance(expression, cst.Call) or not isinstance(expression.func, cst.Name):
            continue
        name = expression.func.value
        if ctx.qualified_name(expression.func) is not None:
            continue  # imported or builtin: not this file's
        info = ctx.summary.classes.get(name)
        if info is not None and "__enter__" in info.methods:
            return True
        for function in ctx.summary.functions:
            if function.name == name and function.enclosing is ctx.summary.scope:
                decorators = {ctx.qualified_name(d.decorator) for d in function.node.decorators}
                if decorators & _CONTEXT_MANAGER_DECORATORS:
                    return True
    return False


def _skips_frame(block: cst.CSTNode, ctx: RuleContext) -> bool:
    if isinstance(block, cst.With):
        return _unmodelled_context_manager(block, ctx)
    return True  # loop and `try` bodies


def breaks_by_block(findings: list[Finding], ctx: RuleContext) -> list[tuple[cst.CSTNode, list[Finding]]]:
    """Each block that makes Dynamo skip the frame, with the breaks found in its body.

    A break counts for its innermost such block only. Under `fullgraph=True` the compile
    fails at the first break anyway, so there is nothing to skip: asking says so, and what is
    found holds only where the project finds no fullgraph compile."""
    if ctx.in_fullgraph:
        return []
    grouped: dict[int, tuple[cst.CSTNode, list[Finding]]] = {}
    for finding in findings:
        if not is_break(finding):
            continue
        block = next((b for b in reversed(finding.enclosing) if _skips_frame(b, ctx)), None)
        if block is not None:
            grouped.setdefault(id(block), (block, []))[1].append(finding)
    return list(grouped.values())


def is_break(finding: Finding) -> bool:
    return finding.rule.code.startswith(_BREAK_FAMILIES)


def breaks_by_function(findings: list[Finding]) -> dict[int, list[Finding]]:
    """id of a function -> the breaks found in it."""
    found: dict[int, list[Finding]] = {}
    for finding in findings:
        if finding.function is not None and is_break(finding):
            found.setdefault(id(finding.function), []).append(finding)
    return found


def met_inside(findings: list[Finding]) -> tuple[BreakMet, ...]:
    """The breaks of a block's own body, as a finding about them meets them."""
    return tuple(BreakMet(finding.standing(), inner=finding) for finding in findings)


def breaks_met(
    start: FunctionInfo,
    breaks: dict[int, list[Finding]],
    ctx: RuleContext,
    via_start: bool = False,
    across_files: bool = True,
) -> list[BreakMet]:
    """The breaks calling ``start`` may meet: its own and those of the file's functions it
    calls (each as it holds), and, ``across_files``, its calls into other files, which break
    where the project says they do. ``via_start``: name ``start`` as the helper the breaks are
    met in."""
    met: list[BreakMet] = []
    callees: set[str] = set()
    pending = [start]
    seen = {id(start)}
    while pending:
        function = pending.pop()
        via = function.qualname if (function is not start or via_start) else None
        met.extend(BreakMet(finding.standing(), inner=finding, via=via) for finding in breaks.get(id(function), ()))
        for call, target in calls_into_code(function, ctx):
            if isinstance(target, FunctionInfo):
                if id(target) not in seen:
                    seen.add(id(target))
                    pending.append(target)
            elif across_files:
                spelled = dotted_name(call.func) or target.name
                if spelled not in callees:
                    callees.add(spelled)
                    met.append(BreakMet(Breaks(target), callee=spelled))
    return met


def calls_into_code(
    function: FunctionInfo, ctx: RuleContext, within: cst.CSTNode | None = None
) -> Iterator[tuple[cst.Call, FunctionInfo | Ref]]:
    """(call, what it runs) for each call of ``function`` (of ``within``, a block of it) into the
    project: a function of this file, or a Ref the project resolves. Calls a guard rules out
    while compiling run nothing."""
    calls = _own_nodes(within, (cst.Call,)) if within is not None else function.calls
    for call in calls:
        for target, _ in ctx.call_index.callees(call.func, function):
            yield call, target


def first_and_more(codes: list[str], others: int = 0) -> str:
    """`TL201`, or `TL201 and 2 more`: the first inner break's code and how many follow it
    (``others`` counts breaks that have no finding here, such as calls into other files)."""
    more = len(codes) + others - 1
    return f"{codes[0]} and {more} more" if more > 0 else codes[0]


def describe(met: list[MetBreak], where: str, function: str) -> str:
    """The message of a frame skip: which break, where, and what it costs."""
    codes = [m.code for m in met if m.code is not None]
    callees = [m.callee for m in met if m.callee is not None]
    # Breaks of another file have no code here: where the first break is says enough.
    breaks = f" ({first_and_more(codes, len(callees))})" if codes else ""
    return (
        f"a graph break{breaks} {where} makes Dynamo skip the whole function: "
        f"`{function}` runs eagerly, uncompiled; fix the break or move it out of the block"
    )


def loops_and_their_breaks(
    findings: list[Finding], ctx: RuleContext
) -> Iterator[tuple[FunctionInfo, cst.CSTNode, list[BreakMet]]]:
    """Each loop of each function with the breaks Dynamo may meet in its body: its own (where
    the loop is the innermost block that skips the frame), and those of the file's helpers it
    calls. Dynamo inlines a helper, meets its break inside the loop, and skips the caller's
    frame too. A break in another file is not counted here: measured on the real-code
    benchmark, the frame skips it predicts did not show."""
    breaks = breaks_by_function(findings)
    for caller in ctx.summary.functions:
        if caller in ctx.disabled:
            continue
        own = {
            id(block): inner
            for block, inner in breaks_by_block(breaks.get(id(caller), []), ctx)
            if isinstance(block, (cst.For, cst.While))
        }
        for loop in _own_nodes(caller.node.body, (cst.For, cst.While)):
            met = list(met_inside(own.get(id(loop), [])))
            elements = _element_calls(loop, caller, ctx)
            for call in _own_nodes(loop.body, (cst.Call,)):
                target = elements.get(call.func.value) if isinstance(call.func, cst.Name) else None
                targets: list[FunctionInfo | Ref]
                if target is not None:
                    targets = [target]
                else:
                    targets = [t for t, _ in ctx.call_index.callees(call.func, caller)]
                for found in targets:
                    if isinstance(found, FunctionInfo) and found is not caller:
                        met.extend(
                            m for m in breaks_met(found, breaks, ctx, via_start=True, across_files=False) if m not in met
                        )
            if met:
                yield caller, loop, met


_MODULE_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})


def _element_calls(loop: cst.CSTNode, caller: FunctionInfo, ctx: RuleContext) -> dict[str, FunctionInfo]:
    """`for layer in self.layers:` over a ModuleList or Sequential of this file's modules:
    the loop name, with what calling it runs (`Block.forward`)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return {}
    iterable = loop.iter
    method = caller.method
    owner = method.owner_class if method is not None else None
    if (
        method is None
        or owner is None
        or not isinstance(iterable, cst.Attribute)
        or not isinstance(iterable.value, cst.Name)
        or iterable.value.value != method.self_name
    ):
        return {}
    container = owner.attribute_values.get(iterable.attr.value)
    if not isinstance(container, cst.Call):
        return {}
    scope = owner.enclosing
    if qualified_name(container.func, scope) not in _MODULE_CONTAINERS:
        return {}
    targets = {
        target
        for element in _container_elements(container)
        if isinstance(element, cst.Call)
        and (cls := ctx.call_index.local_class(element.func, scope)) is not None
        and isinstance(target := ctx.call_index.instance_call(cls), FunctionInfo)
    }
    # Elements of several classes: which one breaks is not known here.
    return {loop.target.value: targets.pop()} if len(targets) == 1 else {}


def _container_elements(container: cst.Call) -> list[cst.BaseExpression]:
    """`ModuleList([Block() for _ in range(n)])`, `ModuleList([A(), B()])`, `Sequential(A(), B())`."""
    values = [arg.value for arg in container.args if arg.keyword is None and not arg.star]
    if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
        return [element.value for element in values[0].elements]
    if len(values) == 1 and isinstance(values[0], (cst.ListComp, cst.GeneratorExp)):
        return [values[0].elt]
    return values


_Node = TypeVar("_Node", bound=cst.CSTNode)


def _own_nodes(body: cst.CSTNode, kinds: tuple[type[_Node], ...]) -> list[_Node]:
    """The nodes of these kinds in a function body, nested functions and classes left out."""
    found: list[_Node] = []
    # Exact types: libcst's classes are final, and a set lookup is far cheaper than an ABC check.
    wanted = frozenset(kinds)

    def visit(node: cst.CSTNode) -> bool | None:
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            return True
        if kind in wanted:
            found.append(cast(_Node, node))  # its type is one of ``kinds``
        return None

    walk(body, visit)
    return found
