from __future__ import annotations

import libcst as cst

from torchlint.analysis.scopes import Scope, qualified_name
from torchlint.rules._setup_code import (
    CompiledCall,
    ScopeOrders,
    changing_names,
    compile_sites,
    compiled_calls,
    target_calls,
    mentions,
    parameter_for,
    reads,
)
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext

_STRING_REMEDY = (
    "pass what the compiled code needs of the string instead (a bool, an index, a tensor), or keep the "
    "string out of compiled code"
)
_ID_REMEDY = "key the lookup by something that stays the same between calls (a name, a shape), or do it outside compiled code"


class StringOrIdInCompiledCode(Rule):
    code = "TL706"
    name = "string-or-id-in-compiled-code"
    message = (
        "a string that differs on every call, or `id()` of an input, is a constant of the graph: each "
        "new value fails its guard and compiles again; pass a value that stays the same between calls"
    )
    suggestion = (
        "`scale(x, is_decoder=name.startswith('decoder'))` instead of `scale(x, name)` with a new name per "
        "call; a cache keyed by a shape or a name instead of `id(x)`"
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        """`id(x)` of an input in compiled code: Dynamo guards on the object itself."""
        func = node.func
        if type(func) is not cst.Name or func.value != "id" or len(node.args) != 1:
            return
        function = ctx.function
        argument = node.args[0].value
        if function is None or type(argument) is not cst.Name or argument.value == function.self_name:
            return
        if ctx.qualified_name(func) != "builtins.id" or function.parameter(argument.value) is None:
            return
        if ctx.assigned_value(argument) is not None or not ctx.is_tensor(argument):
            return
        message = (
            f"`id({argument.value})` in compiled code makes Dynamo guard on that very tensor: an input that is "
            "new on every call fails the guard and compiles again (up to `recompile_limit`, then it runs "
            f"eagerly), and the id is a constant of the graph; {_ID_REMEDY}"
        )
        ctx.report(type(self), node, message)

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        """A compiled callable called in a loop with a string made from the loop's names."""
        sites = [site for site in compile_sites(ctx.summary, ctx.call_index) if site.runs is not None]
        calls = (compiled_calls(ctx.summary, sites) if sites else []) + target_calls(ctx.summary, ctx.call_index)
        if not calls:
            return
        orders = ScopeOrders(ctx.summary)
        for compiled in calls:
            for position, arg in enumerate(compiled.args):
                if arg.star or not _may_be_string(arg.value):
                    continue
                self._check(arg, position, compiled, orders, ctx)

    def _check(self, arg: cst.Arg, position: int, compiled: CompiledCall, orders: ScopeOrders, ctx: RuleContext) -> None:
        runs = compiled.site.runs
        assert runs is not None
        slot: int | str = arg.keyword.value if arg.keyword is not None else position
        if isinstance(slot, int) and any(other.keyword is not None or other.star for other in compiled.args[:position]):
            return
        parameter = parameter_for(runs, slot)
        if parameter is None:
            return
        order = orders.of(compiled.function)
        value = arg.value
        if type(value) is cst.Name:
            assigned = compiled.scope.assignments.get(value.value)
            if assigned is None:
                return
            placed = order.place([compiled.node, assigned])
            call_at, value_at = placed.get(id(compiled.node)), placed.get(id(assigned))
            if call_at is None or value_at is None or not set(map(id, value_at.loops)) & set(map(id, call_at.loops)):
                return
            changing_value = _changing_string(assigned, changing_names(order, value_at, assigned), compiled.scope)
        else:
            placed_call = order.place([compiled.node]).get(id(compiled.node))
            if placed_call is None:
                return
            changing_value = _changing_string(value, changing_names(order, placed_call, compiled.node), compiled.scope)
        if not changing_value:
            return
        uses = reads(runs, parameter)
        if not uses:
            return
        name = compiled.site.bound
        message = (
            f"`{name}` is passed a string that is new on every pass of the loop, and `{runs.name}` reads it "
            f"(`{parameter}`): Dynamo guards on its value, so each new string compiles `{runs.name}` again (up to "
            f"`recompile_limit`, then it runs eagerly); {_STRING_REMEDY}"
        )
        used = Finding(
            type(self), uses[0], uses[0], f"`{parameter}` is read here, in compiled `{runs.qualname}`", None,
            function=runs,
        )
        ctx.report(type(self), value, message, related=(used,))

    invalid = (
        """
        import torch


        @torch.compile
        def scale(x, name):
            if name.startswith("decoder"):
                return x * 0.5
            return x


        def run(x):
            return [scale(x, f"decoder.{layer}") for layer in range(12)]
        """,
        """
        import torch

        CACHE = {}


        @torch.compile
        def cached_norm(x: torch.Tensor):
            key = id(x)
            if key not in CACHE:
                CACHE[key] = x.norm()
            return x / CACHE[key]
        """,
        """
        import torch


        class Router(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.experts = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(4))

            def forward(self, x, route):
                return self.experts[len(route) % 4](x)


        def train(batches):
            model = torch.compile(Router())
            for step, batch in enumerate(batches):
                route = "shard-" + str(step)
                model(batch, route)
        """,
    )

    valid = (
        """
        import torch


        @torch.compile
        def scale(x, is_decoder):
            if is_decoder:
                return x * 0.5
            return x


        def run(x):
            return [scale(x, f"decoder.{layer}".startswith("decoder")) for layer in range(12)]
        """,
        """
        import torch


        def log_shape(x, tag):
            return x


        @torch.compile
        def step(x, tag):
            return log_shape(x, tag) * 2


        def run(x):
            return [step(x, f"step{i}") for i in range(10)]
        """,
        """
        import torch


        @torch.compile
        def reduced(x, reduction):
            if reduction == "mean":
                return x.mean()
            return x.sum()


        def run(x):
            return [reduced(x, mode) for mode in ("mean", "sum")]
        """,
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)
                self.owner = {}

            def forward(self, x):
                self.owner[id(self)] = True
                return self.lin(x)
        """,
    )


def _may_be_string(value: cst.BaseExpression) -> bool:
    """A first test, before anything is placed: a string expression, or a name."""
    return type(value) in (cst.FormattedString, cst.Name, cst.Call, cst.BinaryOperation)


def _changing_string(value: cst.BaseExpression, changing: set[str], scope: Scope) -> bool:
    """A string made from names that change between runs: `f"layer{i}"`, `str(i)`, `"%d" % i`,
    `"{}".format(i)`, and sums of such strings with literals."""
    if not changing:
        return False
    kind = type(value)
    if kind is cst.FormattedString:
        return any(
            isinstance(part, cst.FormattedStringExpression) and mentions(part.expression, changing) for part in value.parts
        )
    if kind is cst.Call:
        func = value.func
        if type(func) is cst.Name and qualified_name(func, scope) in ("builtins.str", "builtins.repr"):
            return len(value.args) == 1 and mentions(value.args[0].value, changing)
        if type(func) is cst.Attribute and func.attr.value == "format" and _is_string(func.value):
            return any(mentions(arg.value, changing) for arg in value.args)
        return False
    if kind is cst.BinaryOperation:
        if isinstance(value.operator, cst.Modulo):
            return _is_string(value.left) and mentions(value.right, changing)
        if isinstance(value.operator, cst.Add):
            sides = (value.left, value.right)
            stringy = all(_is_string(side) or _changing_string(side, changing, scope) for side in sides)
            return stringy and any(_changing_string(side, changing, scope) for side in sides)
    return False


def _is_string(node: cst.BaseExpression) -> bool:
    return type(node) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
