from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.analysis.scopes import Scope, qualified_name
from torchlint.analysis.summary import FileSummary, FunctionInfo
from torchlint.parse.cst_walk import walk
from torchlint.report.diagnostic import Applicability
from torchlint.rules._setup_code import CompileSite, ScopeOrders, compile_sites
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext
from torchlint.rules.fixes import FixPlan, NodeEdit, remove_statement

_CONFIG = "torch._dynamo.config"
_PATCH = "torch._dynamo.config.patch"
_MARK_STATIC = frozenset({"torch._dynamo.mark_static", "torch._dynamo.decorators.mark_static"})
_MARK_DYNAMIC = frozenset(
    {"torch._dynamo.mark_dynamic", "torch._dynamo.maybe_mark_dynamic",
     "torch._dynamo.decorators.mark_dynamic", "torch._dynamo.decorators.maybe_mark_dynamic"}
)
# setting -> the value that makes Dynamo specialize, and what it makes a constant of the graph
_SPECIALIZING = {
    "specialize_int": (True, "every int passed to compiled code"),
    "specialize_float": (True, "every float passed to compiled code"),
    "automatic_dynamic_shapes": (False, "every tensor size"),
}
_LIMIT = "(up to `recompile_limit`, then the code runs eagerly)"
# The settings that bound how many graphs a frame keeps: a patch that raises one along with a
# specializing setting expects the graphs it makes.
_LIMITS = frozenset({"recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"})


class SpecializingDynamoConfig(Rule):
    code = "TL707"
    name = "specializing-dynamo-config"
    message = (
        "this Dynamo setting makes values that change between calls constants of the graph, so each new "
        "value compiles again; remove it, or mark the dimensions that change with `mark_dynamic`"
    )
    suggestion = (
        "delete the setting: an int, a float or a size that changes then costs one recompile and stays "
        "symbolic; to choose which dimensions are dynamic, `torch._dynamo.mark_dynamic(x, dim)`"
    )
    fixes = (Applicability.UNSAFE,)

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        summary = ctx.summary
        if not _imports_torch(summary):
            return
        # the functions (None: module level) that mark dimensions dynamic themselves
        marking: set[int] = set()
        # Whether the file reaches into torch._dynamo: only then are its statements read for
        # config assignments (with a compile of its own, below).
        reaches_dynamo = _imports_dynamo(summary)
        patches: list[tuple[cst.Call, list[str], FunctionInfo | None]] = []
        statics: list[tuple[cst.Call, FunctionInfo | None]] = []
        for call, scope, caller in summary.calls:
            func = call.func
            last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
            if not reaches_dynamo and type(func) is cst.Attribute:
                reaches_dynamo = _through_dynamo(func)
            if last == "patch":
                if qualified_name(func, scope) == _PATCH:
                    patched = _patched_settings(call)
                    if patched:
                        patches.append((call, patched, caller))
            elif last == "mark_static":
                if qualified_name(func, scope) in _MARK_STATIC and _names_a_dimension(call):
                    statics.append((call, caller))
            elif last in ("mark_dynamic", "maybe_mark_dynamic"):
                if qualified_name(func, scope) in _MARK_DYNAMIC:
                    marking.add(id(caller))
        sites = compile_sites(summary, ctx.call_index)
        all_dynamic = bool(sites) and all(_says_dynamic(site.node) for site in sites)

        def sizes_dynamic(where: FunctionInfo | None) -> bool:
            """Sizes stay dynamic where every compile of the file says `dynamic=True`, or where the
            code that turns automatic dynamic shapes off marks the dimensions that change itself
            (the function it is in; anywhere in the file for a module-level setting)."""
            return all_dynamic or (bool(marking) if where is None else id(where) in marking)
        compiled_here = [site.runs for site in sites if site.runs is not None]
        orders = ScopeOrders(summary)

        def related(node: cst.CSTNode, where: FunctionInfo | None) -> tuple[Finding, ...]:
            """What runs under the setting, where the file shows it: the functions the scope calls
            or hands on after it (a function), or every function the file compiles (module level)."""
            runs = compiled_here if where is None else _run_after(node, where, orders, sites, ctx)
            return tuple(
                Finding(type(self), run.name_node, run.name_node, f"`{run.qualname}` runs under it", None, function=run)
                for run in dict.fromkeys(runs)
            )

        assignments = _assignments(summary) if reaches_dynamo or sites else ()
        for statement, small, setting, function in assignments:
            if setting == "automatic_dynamic_shapes" and sizes_dynamic(function):
                continue
            value, what = _SPECIALIZING[setting]
            message = (
                f"`torch._dynamo.config.{setting} = {value}` makes {what} a constant of the graph: each new "
                f"{_noun(setting)} compiles again {_LIMIT}; {_remedy(setting)}"
            )
            fix = _removal(statement, function, summary, setting)
            ctx.report(type(self), small, message, related=related(small, function), fix=fix)
        for call, settings, caller in patches:
            settings = [s for s in settings if not (s == "automatic_dynamic_shapes" and sizes_dynamic(caller))]
            if not settings:
                continue
            shown = ", ".join(f"{s}={_SPECIALIZING[s][0]}" for s in settings)
            what = " and ".join(_SPECIALIZING[s][1] for s in settings)
            message = (
                f"`torch._dynamo.config.patch({shown})` makes {what} a constant of the graph while it holds: each "
                f"new {_noun(settings[0])} compiles again {_LIMIT}; {_remedy(settings[0])}"
            )
            ctx.report(type(self), call, message, related=related(call, caller))
        for call, caller in statics:
            message = (
                "`torch._dynamo.mark_static` makes that dimension a constant of the graph: each new size of it "
                f"compiles again {_LIMIT}; leave it to Dynamo (a size that changes costs one recompile, then stays "
                "symbolic), or `torch._dynamo.mark_dynamic` it"
            )
            ctx.report(type(self), call, message, related=related(call, caller))

    invalid = (
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.automatic_dynamic_shapes = False


        @torch.compile
        def normalize(x):
            return x / x.norm(dim=-1, keepdim=True)
        """,
        """
        import torch
        from torch._dynamo import config


        def main(model, batches):
            config.specialize_int = True
            compiled = torch.compile(model)
            for step, batch in enumerate(batches):
                with torch._dynamo.config.patch(specialize_float=True):
                    compiled(batch, step)
        """,
        """
        import torch
        import torch._dynamo


        @torch.compile
        def pooled(x):
            return x.softmax(-1).mean(1)


        def run(batches):
            for x in batches:
                torch._dynamo.mark_static(x, 1)
                pooled(x)
        """,
    )

    valid = (
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.automatic_dynamic_shapes = True
        torch._dynamo.config.specialize_int = False
        torch._dynamo.config.cache_size_limit = 64


        @torch.compile
        def normalize(x):
            return x / x.norm(dim=-1, keepdim=True)
        """,
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.automatic_dynamic_shapes = False


        @torch.compile
        def pooled(x):
            return x.softmax(-1).mean(1)


        def run(batches):
            for x in batches:
                torch._dynamo.mark_dynamic(x, 1)
                pooled(x)
        """,
        """
        import torch
        import torch._dynamo


        @torch.compile(dynamic=True)
        def pooled(x):
            return x.softmax(-1).mean(1)


        def run(batches, model):
            torch._dynamo.mark_static(model)
            with torch._dynamo.config.patch(automatic_dynamic_shapes=False, cache_size_limit=16):
                return [pooled(x) for x in batches]
        """,
    )


def _noun(setting: str) -> str:
    return "size" if setting == "automatic_dynamic_shapes" else "value"


def _remedy(setting: str) -> str:
    if setting == "automatic_dynamic_shapes":
        return "remove it, or mark the dimensions that change with `torch._dynamo.mark_dynamic`"
    return "remove it (a value that changes then costs one recompile and stays symbolic)"


def _imports_torch(summary: FileSummary) -> bool:
    """A first test: a file that imports nothing of torch sets no Dynamo config."""
    scopes = [summary.scope, *(function.scope for function in summary.functions)]
    return any(name == "torch" or name.startswith("torch.") for scope in scopes for name in scope.imports.values())


def _run_after(
    node: cst.CSTNode, where: FunctionInfo, orders: ScopeOrders, sites: list[CompileSite], ctx: RuleContext
) -> list[FunctionInfo]:
    """The functions of the file that ``where`` calls or hands on (`yield step, args`) from
    ``node`` on (the whole of a loop ``node`` is in): a function by its name, a callable compiled
    under a name, a module of the file by its instance."""
    order = orders.of(where)
    placed = order.place([node]).get(id(node))
    if placed is None:
        return []
    first = order.spans[id(placed.loops[0])][0] if placed.loops else placed.order
    bound = {site.bound: site.runs for site in sites if site.bound is not None and site.runs is not None}
    scope = where.scope
    found: list[FunctionInfo] = []

    def visit(child: cst.CSTNode) -> bool | None:
        if type(child) is cst.Attribute:
            walk(child.value, visit)  # `x.step` names an attribute, not the function `step`
            return True
        if type(child) is not cst.Name:
            return None
        run = ctx.call_index.local_function(child, scope) or bound.get(child.value)
        if run is None:
            instance = ctx.call_index.instance_class(child, where, scope)
            target = ctx.call_index.instance_call(instance) if instance is not None and not isinstance(instance, str) else None
            run = target if isinstance(target, FunctionInfo) else None
        if run is not None:
            found.append(run)
        return None

    for _, parts, _ in order.entries[first:]:
        for part in parts:
            walk(part, visit)
    return found


def _imports_dynamo(summary: FileSummary) -> bool:
    scopes = [summary.scope, *(function.scope for function in summary.functions)]
    return any(name.startswith("torch._dynamo") for scope in scopes for name in scope.imports.values())


def _through_dynamo(func: cst.Attribute) -> bool:
    """`torch._dynamo.reset()`, `torch._dynamo.config.patch(...)`: a call reached through `_dynamo`."""
    node: cst.BaseExpression = func.value
    while type(node) is cst.Attribute:
        if node.attr.value == "_dynamo":
            return True
        node = node.value
    return False


def _is_true(node: cst.BaseExpression) -> bool | None:
    if type(node) is cst.Name and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _patched_settings(call: cst.Call) -> list[str]:
    """The specializing settings a `config.patch(...)` gives their specializing value:
    `patch(specialize_int=True)`, `patch("specialize_int", True)`, `patch({"specialize_int": True})`."""
    pairs: list[tuple[str, cst.BaseExpression]] = []
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    pairs += [(arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None]
    if len(positional) == 2 and type(positional[0]) is cst.SimpleString:
        key = positional[0].evaluated_value
        if isinstance(key, str):
            pairs.append((key, positional[1]))
    elif len(positional) == 1 and type(positional[0]) is cst.Dict:
        for element in positional[0].elements:
            if isinstance(element, cst.DictElement) and type(element.key) is cst.SimpleString:
                key = element.key.evaluated_value
                if isinstance(key, str):
                    pairs.append((key, element.value))
    if any(setting in _LIMITS for setting, _ in pairs):
        return []  # specializing on purpose, with room for the graphs it makes
    return [
        setting for setting, value in pairs
        if setting in _SPECIALIZING and _is_true(value) is _SPECIALIZING[setting][0]
    ]


def _names_a_dimension(call: cst.Call) -> bool:
    """`mark_static(x, 1)`, `mark_static(x, index=1)`: a dimension; `mark_static(module)` marks a module."""
    return len(call.args) >= 2 or any(arg.keyword is not None and arg.keyword.value == "index" for arg in call.args)


def _says_dynamic(site: cst.CSTNode) -> bool:
    call = site.decorator if isinstance(site, cst.Decorator) else site
    if not isinstance(call, cst.Call):
        return False
    return any(
        arg.keyword is not None and arg.keyword.value == "dynamic" and _is_true(arg.value) is True for arg in call.args
    )


# Compound statements' fields that hold blocks (or, for `elif`, the next `if`).
_BLOCKS: dict[type, tuple[str, ...]] = {
    cst.If: ("body", "orelse"), cst.Else: ("body",), cst.For: ("body", "orelse"), cst.While: ("body", "orelse"),
    cst.Try: ("body", "handlers", "orelse", "finalbody"), cst.TryStar: ("body", "handlers", "orelse", "finalbody"),
    cst.ExceptHandler: ("body",), cst.ExceptStarHandler: ("body",), cst.Finally: ("body",), cst.With: ("body",),
    cst.Match: ("cases",), cst.MatchCase: ("body",),
}


def _assignments(summary: FileSummary) -> Iterator[tuple[cst.CSTNode, cst.BaseSmallStatement, str, FunctionInfo | None]]:
    """`torch._dynamo.config.<setting> = <specializing value>` statements, however torch is
    imported, at module level, in classes and in functions: (line, statement, setting, function).
    Statements only: no expression is walked."""
    functions = {id(function.node): function for function in summary.functions if function.lambda_node is None}
    class_scopes = {id(info.node): info.scope for info in summary.classes.values()}
    pending: list[tuple[cst.CSTNode, Scope, FunctionInfo | None]] = [(summary.module, summary.scope, None)]
    while pending:
        node, scope, function = pending.pop()
        kind = type(node)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            for small in node.body:
                if type(small) is cst.Assign or type(small) is cst.AnnAssign:
                    setting = _setting_assigned(small, scope)
                    if setting is not None:
                        yield node, small, setting, function
        elif kind is cst.Module or kind is cst.IndentedBlock:
            pending.extend((child, scope, function) for child in reversed(node.body))
        elif kind is cst.FunctionDef:
            inner = functions.get(id(node))
            if inner is not None:
                pending.append((node.body, inner.scope, inner))
        elif kind is cst.ClassDef:
            pending.append((node.body, class_scopes.get(id(node), scope), function))
        else:
            for name in reversed(_BLOCKS.get(kind, ())):
                child = getattr(node, name)
                if type(child) is list or type(child) is tuple:
                    pending.extend((item, scope, function) for item in reversed(child))
                elif child is not None:
                    pending.append((child, scope, function))


def _setting_assigned(small: cst.Assign | cst.AnnAssign, scope: Scope) -> str | None:
    if small.value is None:
        return None
    targets = [target.target for target in small.targets] if type(small) is cst.Assign else [small.target]
    for target in targets:
        if type(target) is not cst.Attribute:
            continue
        setting = target.attr.value
        specializing = _SPECIALIZING.get(setting)
        if specializing is not None and _is_true(small.value) is specializing[0]:
            if qualified_name(target.value, scope) == _CONFIG:
                return setting
    return None


def _removal(statement: cst.CSTNode, function: FunctionInfo | None, summary: FileSummary, setting: str) -> FixPlan | None:
    """The line deleted (unsafe: compiled code then keeps sizes, ints or floats symbolic once they
    change, which the setting may have been there to stop)."""
    message = f"Remove the `{setting}` setting"
    if function is None and any(line is statement for line in summary.module.body):
        # A statement of the module's own body: no block is left empty behind it.
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and statement.trailing_whitespace.comment is None
        ):
            return None
        return FixPlan(message, Applicability.UNSAFE, (NodeEdit(statement, "", whole_lines=True),))
    within = summary.module if function is None else function.node
    return remove_statement(statement, within, message, Applicability.UNSAFE, lambda line: False)
