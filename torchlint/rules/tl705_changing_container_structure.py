from __future__ import annotations

import libcst as cst

from torchlint.analysis.scopes import qualified_name
from torchlint.rules._setup_code import (
    CompiledCall,
    ScopeOrder,
    ScopeOrders,
    changing_names,
    compile_sites,
    compiled_calls,
    target_calls,
    mentions,
    parameter_for,
    reads,
    star_parameter,
)
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext

_REMEDY = "stack the tensors into one tensor (a size that changes costs one recompile), or always pass every key"
# Methods that make a list longer.
_GROWING = frozenset({"append", "extend", "insert"})
# Positional counts a `*args` function may be called with before the recompiles pass two.
_ARITIES_FLAGGED_FROM = 4


class ChangingContainerStructure(Rule):
    code = "TL705"
    name = "changing-container-structure"
    message = (
        "a list, dict or `*args` whose length or keys change between calls to compiled code: Dynamo "
        "guards on the structure, so each new one compiles again; " + _REMEDY
    )
    suggestion = (
        "`total(torch.stack(losses))` for `total(*losses)` with a growing `losses`; a dict with the "
        "same keys on every call (zeros for the terms a step lacks)"
    )

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        sites = [site for site in compile_sites(ctx.summary, ctx.call_index) if site.runs is not None]
        calls = (compiled_calls(ctx.summary, sites) if sites else []) + target_calls(ctx.summary, ctx.call_index)
        if not calls:
            return
        orders = ScopeOrders(ctx.summary)
        growing = _growing_lists(ctx)
        for compiled in calls:
            for arg in compiled.args:
                what = _changing_structure(arg, compiled, orders, growing, ctx)
                if what is not None:
                    self._report(arg, what, compiled, ctx)
        self._star_arities(calls, ctx)

    def _report(self, arg: cst.Arg, what: str, compiled: CompiledCall, ctx: RuleContext) -> None:
        runs = compiled.site.runs
        assert runs is not None
        name = compiled.site.bound
        if what == "list":
            changes, remedy = "length changes", "stack the tensors into one tensor"
        else:
            changes, remedy = "keys change", "pass the same keys every time"
        guarded = changes.split()[0]
        message = (
            f"`{name}` is passed a {what} whose {changes} on every pass of the loop: Dynamo guards on the "
            f"{guarded}, so each new {'one' if what == 'list' else 'key set'} compiles `{runs.name}` again (up to "
            f"`recompile_limit`, then it runs eagerly); {remedy}"
        )
        ctx.report(type(self), arg.value, message, related=(_compiled_here(runs, f"a {what}"),))

    def _star_arities(self, calls: list[CompiledCall], ctx: RuleContext) -> None:
        """A function with `*args` called with many different numbers of positional arguments."""
        by_site: dict[int, list[CompiledCall]] = {}
        for compiled in calls:
            by_site.setdefault(id(compiled.site), []).append(compiled)
        for group in by_site.values():
            runs = group[0].site.runs
            assert runs is not None
            star = star_parameter(runs)
            if star is None or not reads(runs, star):
                continue
            firsts: dict[int, CompiledCall] = {}
            for compiled in group:
                args = compiled.args
                if any(arg.star for arg in args):
                    continue
                firsts.setdefault(sum(1 for arg in args if arg.keyword is None), compiled)
            if len(firsts) < _ARITIES_FLAGGED_FROM:
                continue
            counts = list(firsts)
            for count, compiled in list(firsts.items())[1:]:
                others = ", ".join(str(other) for other in counts if other != count)
                message = (
                    f"`{compiled.site.bound}` takes `*{star}` and is called here with {count} positional arguments, "
                    f"elsewhere in this file with {others}: each count is a new length of `{star}` to Dynamo, which "
                    f"compiles `{runs.name}` again for it; pass the tensors stacked into one tensor"
                )
                ctx.report(type(self), compiled.node, message, related=(_compiled_here(runs, f"`*{star}`"),))

    invalid = (
        """
        import torch


        @torch.compile
        def total_loss(*losses):
            return torch.stack(losses).sum()


        def train(batches):
            losses = []
            for batch in batches:
                losses.append(batch.mean())
                print(total_loss(*losses))
        """,
        """
        import torch


        class Weighted(torch.nn.Module):
            def forward(self, terms):
                return sum(value.mean() for value in terms.values())


        def train(batches):
            compiled = torch.compile(Weighted())
            for step, batch in enumerate(batches):
                compiled({f"layer{i}": batch[i] for i in range(step + 1)})
        """,
    )

    valid = (
        """
        import torch


        @torch.compile
        def total_loss(losses):
            return losses.sum()


        def train(batches):
            losses = []
            for batch in batches:
                losses.append(batch.mean())
                print(total_loss(torch.stack(losses)))
        """,
        """
        import torch


        @torch.compile
        def total_loss(*losses):
            return torch.stack(losses).sum()


        def train(batches):
            for batch in batches:
                losses = []
                losses.append(batch.mean())
                losses.append(batch.std())
                print(total_loss(*losses))
        """,
        """
        import torch


        @torch.compile
        def first_tokens(x, length):
            return x[:, :length].sum()


        def run(x):
            return [first_tokens(x[:, :n], n) for n in range(1, 10)]
        """,
        """
        import torch


        @torch.compile
        def concat(*chunks):
            return torch.cat(chunks).sum()


        def run(a, b, c):
            return concat(a), concat(a, b), concat(a, b, c)
        """,
    )


def _compiled_here(runs, what: str) -> Finding:
    return Finding(
        ChangingContainerStructure, runs.name_node, runs.name_node,
        f"`{runs.qualname}` is compiled and guards on the structure of {what}", None, function=runs,
    )


def _growing_lists(ctx: RuleContext) -> dict[tuple[int, str], list[cst.Call]]:
    """(id of the scope, name) -> the calls that make the list it names longer (`xs.append(t)`)."""
    found: dict[tuple[int, str], list[cst.Call]] = {}
    for call, scope, _ in ctx.summary.calls:
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in _GROWING and type(func.value) is cst.Name:
            found.setdefault((id(scope), func.value.value), []).append(call)
    return found


def _changing_structure(
    arg: cst.Arg,
    compiled: CompiledCall,
    orders: ScopeOrders,
    growing: dict[tuple[int, str], list[cst.Call]],
    ctx: RuleContext,
) -> str | None:
    """"list" or "dict" where ``arg`` passes a container whose structure changes from one run of
    the call to the next, and the compiled function reads what it fills; else None."""
    value = arg.value
    if type(value) not in (cst.Name, cst.Subscript, cst.Dict, cst.DictComp, cst.ListComp):
        return None  # most arguments: decided without placing anything
    runs = compiled.site.runs
    assert runs is not None
    if arg.star == "*":
        parameter = star_parameter(runs)
    elif arg.star:
        return None
    else:
        slot = arg.keyword.value if arg.keyword is not None else _position(compiled.args, arg)
        parameter = parameter_for(runs, slot) if slot is not None else None
    if parameter is None:
        return None
    order = orders.of(compiled.function)
    what = _structure(value, compiled, order, growing)
    if what is None or not reads(runs, parameter):
        return None
    return what


def _position(args: tuple[cst.Arg, ...], arg: cst.Arg) -> int | None:
    position = 0
    for other in args:
        if other is arg:
            return position
        if other.keyword is not None or other.star:
            return None
        position += 1
    return None


def _structure(
    value: cst.BaseExpression,
    compiled: CompiledCall,
    order: ScopeOrder,
    growing: dict[tuple[int, str], list[cst.Call]],
) -> str | None:
    scope = compiled.scope
    if type(value) is cst.Name:
        if _grows_between_calls(value.value, compiled, order, growing):
            return "list"
        assigned = scope.assignments.get(value.value)
        if type(assigned) in (cst.Subscript, cst.Dict, cst.DictComp, cst.ListComp):
            # `terms = {...}` in the loop, then `step(terms)`
            placed = order.place([compiled.node, assigned])
            call_at, value_at = placed.get(id(compiled.node)), placed.get(id(assigned))
            if call_at is None or value_at is None or not set(map(id, value_at.loops)) & set(map(id, call_at.loops)):
                return None
            return _literal_structure(assigned, changing_names(order, value_at, assigned), scope, growing)
        return None
    call_placed = order.place([compiled.node]).get(id(compiled.node))
    if call_placed is None:
        return None
    return _literal_structure(value, changing_names(order, call_placed, compiled.node), scope, growing)


def _literal_structure(value, changing: set[str], scope, growing) -> str | None:
    """What a written container changes between runs: "list" for `xs[:i]` or a comprehension
    over `range(i)`, "dict" for keys made from the loop's names; None where nothing changes."""
    if not changing:
        return None
    if type(value) is cst.Subscript:
        if type(value.value) is cst.Name and _is_list(value.value.value, scope, growing) and _changing_slice(value, changing):
            return "list"
        return None
    if type(value) is cst.Dict:
        for element in value.elements:
            if isinstance(element, cst.DictElement) and mentions(element.key, changing):
                return "dict"
        return None
    if type(value) in (cst.DictComp, cst.ListComp) and _changing_count(value.for_in.iter, changing):
        return "dict" if type(value) is cst.DictComp else "list"
    return None


def _is_list(name: str, scope, growing) -> bool:
    assigned = scope.assignments.get(name)
    if type(assigned) in (cst.List, cst.ListComp):
        return True
    if type(assigned) is cst.Call and qualified_name(assigned.func, scope) == "builtins.list":
        return True
    return (id(scope), name) in growing


def _changing_slice(subscript: cst.Subscript, changing: set[str]) -> bool:
    """`xs[:i]`, `xs[i:]`: a slice whose bound moves with the loop."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Slice:
        return False
    piece = subscript.slice[0].slice
    return any(bound is not None and mentions(bound, changing) for bound in (piece.lower, piece.upper))


def _changing_count(iterable: cst.BaseExpression, changing: set[str]) -> bool:
    """`range(step + 1)` or `names[:step]`: as many items as the loop says."""
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "range":
        return any(mentions(arg.value, changing) for arg in iterable.args)
    return type(iterable) is cst.Subscript and _changing_slice(iterable, changing)


def _grows_between_calls(
    name: str, compiled: CompiledCall, order: ScopeOrder, growing: dict[tuple[int, str], list[cst.Call]]
) -> bool:
    """`xs.append(t)` in a loop that also calls the compiled function with `xs`, where the loop
    does not start `xs` afresh on each pass."""
    growth = growing.get((id(compiled.scope), name))
    if not growth:
        return False
    placed = order.place([compiled.node, *growth])
    call_at = placed.get(id(compiled.node))
    if call_at is None:
        return False
    for loop in reversed(call_at.loops):
        if any(id(g) in placed and order.in_loop(placed[id(g)], loop) for g in growth):
            return name not in order.assigned_in(loop)
    return False
