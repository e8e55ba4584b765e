"""Where a graph break makes Dynamo give up on the whole function (TL6xx).

Dynamo resumes after an ordinary break in a new graph. It cannot resume inside a
`for`/`while` body, a `try` body, or a `with` block whose context manager it does not
model (a class with `__enter__`, a `@contextmanager` generator): there it skips the whole
frame and the function runs eagerly. The grad-mode, autocast and profiler context
managers are modelled, so a break under them is an ordinary one.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.parse.cst_walk import walk
from torchlint.rules.context import Finding, RuleContext
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
    fails at the first break anyway, so there is nothing to skip.
    """
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
    """id of a compiled function -> the breaks found in it."""
    found: dict[int, list[Finding]] = {}
    for finding in findings:
        if finding.function is not None and is_break(finding):
            found.setdefault(id(finding.function), []).append(finding)
    return found


def breaks_met(
    start: FunctionInfo, breaks: dict[int, list[Finding]], told: frozenset[str], ctx: RuleContext
) -> tuple[list[Finding], list[str]]:
    """The breaks calling ``start`` meets: its own and those of the file's functions it calls,
    and the calls (as spelled) into other files that the project says break (``told``)."""
    inner: list[Finding] = []
    elsewhere: list[str] = []
    pending = [start]
    seen = {id(start)}
    while pending:
        function = pending.pop()
        inner.extend(breaks.get(id(function), ()))
        for call in function.calls:
            spelled = dotted_name(call.func)
            if spelled is not None and spelled in told and spelled not in elsewhere:
                elsewhere.append(spelled)
            callee = ctx.call_index.callee(call.func, function)
            if isinstance(callee, FunctionInfo) and id(callee) not in seen and callee in ctx.regions.compiled:
                seen.add(id(callee))
                pending.append(callee)
    return inner, elsewhere


def loops_calling_breaking_helpers(
    findings: list[Finding], ctx: RuleContext
) -> Iterator[tuple[FunctionInfo, cst.CSTNode, list[Finding]]]:
    """Loops whose body calls a compiled function of this file that breaks the graph.

    Dynamo inlines the helper, meets its break inside the loop, and skips the caller's
    frame: (caller, loop, the helper's breaks) for each such loop.
    """
    breaks = breaks_by_function(findings)
    if not breaks:
        return
    for caller in ctx.regions.compiled:
        if caller in getattr(ctx.regions, "fullgraph", ()):
            continue
        for loop in _own_nodes(caller.node.body, (cst.For, cst.While)):
            inner: list[Finding] = []
            elements = _element_calls(loop, caller, ctx)
            for call in _own_nodes(loop.body, (cst.Call,)):
                target = elements.get(call.func.value) if isinstance(call.func, cst.Name) else None
                if target is None:
                    target = ctx.call_index.callee(call.func, caller)
                if isinstance(target, FunctionInfo) and target is not caller and target in ctx.regions.compiled:
                    inner.extend(f for f in breaks.get(id(target), ()) if f not in inner)
            if inner:
                yield caller, loop, inner


_MODULE_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})


def _element_calls(loop: cst.CSTNode, caller: FunctionInfo, ctx: RuleContext) -> dict[str, FunctionInfo]:
    """`for layer in self.layers:` over a ModuleList or Sequential of this file's modules:
    the loop name, with what calling it runs (`Block.forward`)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return {}
    iterable = loop.iter
    method = caller.method
    if (
        method is None
        or not isinstance(iterable, cst.Attribute)
        or not isinstance(iterable.value, cst.Name)
        or iterable.value.value != method.self_name
    ):
        return {}
    container = method.owner_class.attribute_values.get(iterable.attr.value)
    if not isinstance(container, cst.Call):
        return {}
    scope = method.owner_class.enclosing
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


def _own_nodes(body: cst.CSTNode, kinds: tuple[type, ...]) -> list:
    """The nodes of these kinds in a function body, nested functions and classes left out."""
    found: list = []
    # Exact types: libcst's classes are final, and a set lookup is far cheaper than an ABC check.
    wanted = frozenset(kinds)

    def visit(node: cst.CSTNode) -> bool | None:
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            return True
        if kind in wanted:
            found.append(node)
        return None

    walk(body, visit)
    return found


def first_and_more(inner: list[Finding], others: int = 0) -> str:
    """`TL201`, or `TL201 and 2 more`: the first inner break's code and how many follow it
    (``others`` counts breaks that have no finding here, such as calls into other files)."""
    more = len(inner) + others - 1
    return f"{inner[0].rule.code} and {more} more" if more > 0 else inner[0].rule.code


def describe(inner: list[Finding], where: str, function: str) -> str:
    """The message: which break, where, and what it costs."""
    return (
        f"a graph break ({first_and_more(inner)}) {where} makes Dynamo skip the whole function: "
        f"`{function}` runs eagerly, uncompiled; fix the break or move it out of the block"
    )


def gb_ids_of(rule_ids: tuple[str, ...], inner: list[Finding]) -> tuple[str, ...]:
    """The skip's own id, then the inner breaks' ids, each once."""
    ids = list(rule_ids)
    for finding in inner:
        for gb_id in finding.gb_ids if finding.gb_ids is not None else finding.rule.gb_ids:
            if gb_id not in ids:
                ids.append(gb_id)
    return tuple(ids)
