from __future__ import annotations

import libcst as cst

from torchlint.analysis.scopes import dotted_name, qualified_name
from torchlint.analysis.summary import target_names
from torchlint.parse.cst_walk import walk
from torchlint.rules._setup_code import (
    CompileSite,
    Placed,
    ScopeOrder,
    ScopeOrders,
    compile_sites,
)
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext

_HOOK_METHODS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_backward_hook"}
)
_GLOBAL_HOOKS = frozenset(
    f"torch.nn.modules.module.register_module_{kind}"
    for kind in ("forward_hook", "forward_pre_hook", "full_backward_hook", "full_backward_pre_hook", "backward_hook")
)
# Methods whose results are a module's submodules (`named_modules` yields the module itself too).
_SUBMODULE_WALKS = frozenset({"modules", "named_modules", "children", "named_children"})
_REMEDY = "register hooks before the first compiled call (or call `torch._dynamo.reset()` after adding one)"


class HookAddedAfterCompile(Rule):
    code = "TL709"
    name = "hook-added-after-compile"
    message = (
        "a hook registered on a submodule after the compiled model has run is silently skipped by the "
        "compiled code (Dynamo does not guard on hooks); " + _REMEDY
    )
    suggestion = "move the `register_*_hook(...)` call above the first call of the compiled model"

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        summary = ctx.summary
        sites = [site for site in compile_sites(summary, ctx.call_index) if _handles(site)]
        if not sites:
            return
        hooks: dict[int, list[tuple[cst.Call, bool]]] = {}
        for call, scope, function in summary.calls:
            func = call.func
            if type(func) is not cst.Attribute:
                continue
            if func.attr.value in _HOOK_METHODS:
                hooks.setdefault(id(function), []).append((call, False))
            elif func.attr.value.startswith("register_module_") and qualified_name(func, scope) in _GLOBAL_HOOKS:
                hooks.setdefault(id(function), []).append((call, True))
        if not hooks:
            return
        orders = ScopeOrders(summary)
        for site in sites:
            in_scope = hooks.get(id(site.function))
            if in_scope:
                self._check(site, in_scope, orders.of(site.function), ctx)

    def _check(self, site: CompileSite, hooks: list[tuple[cst.Call, bool]], order: ScopeOrder, ctx: RuleContext) -> None:
        found = _handles(site)
        assert found is not None
        handles, called = found
        module_name = dotted_name(site.target) if site.target is not None else called
        ran = f"the compiled `{called}`" if called == module_name else f"`{called}`, the compiled `{module_name}`,"
        placed = order.place([site.node, *(call for call, _ in hooks)])
        compiled_at = placed.get(id(site.node))
        if compiled_at is None:
            return
        candidates = [
            (call, is_global) for call, is_global in hooks
            if id(call) in placed and placed[id(call)].order > compiled_at.order
            and (is_global or _on_submodule(call, handles, placed[id(call)]))
        ]
        if not candidates:
            return
        uses = _uses(order, called, compiled_at.order)
        if not uses:
            return
        module = ctx.summary.module
        # Hooks there already when the compiled code first ran: Dynamo guards on how many there
        # are, so one more is noticed (one recompile), not skipped.
        first_run = uses[0].order
        present = {
            (module.code_for_node(call.func.value), call.func.attr.value)
            for call, is_global in hooks
            if not is_global and id(call) in placed and placed[id(call)].order < first_run
        }
        for call, is_global in candidates:
            hook_at = placed[id(call)]
            if not any(use.order < hook_at.order for use in uses):
                continue
            if not is_global and (module.code_for_node(call.func.value), call.func.attr.value) in present:
                continue
            shown = ctx.summary.module.code_for_node(call.func)
            what = "a global module hook" if is_global else "a hook on a submodule"
            message = (
                f"`{shown}(...)` adds {what} after {ran} has run: Dynamo traced the submodules "
                "inline on the first call, without the hook, and does not guard on hooks added later "
                f"(`skip_nnmodule_hook_guards`), so compiled calls silently skip it; {_REMEDY}"
            )
            compiled_here = Finding(type(self), site.node, site.node, f"`{module_name}` is compiled here", None)
            ctx.report(type(self), call, message, related=(compiled_here,))

    invalid = (
        """
        import torch


        def clip(module, inputs, output):
            return output.clamp(-1.0, 1.0)


        def train(model, batches):
            compiled = torch.compile(model)
            for step, batch in enumerate(batches):
                compiled(batch).sum().backward()
                if step == 100:
                    model.encoder.register_forward_hook(clip)
        """,
        """
        import torch


        def record(module, inputs, output):
            print(module, output.shape)


        def evaluate(model, batches):
            model.compile()
            model(batches[0])
            for name, module in model.named_modules():
                if isinstance(module, torch.nn.Linear):
                    module.register_forward_hook(record)
            return [model(batch) for batch in batches]
        """,
    )

    valid = (
        """
        import torch


        def clip(module, inputs, output):
            return output.clamp(-1.0, 1.0)


        def train(model, batches):
            model.encoder.register_forward_hook(clip)
            compiled = torch.compile(model)
            for batch in batches:
                compiled(batch).sum().backward()
        """,
        """
        import torch


        def clip(module, inputs, output):
            return output.clamp(-1.0, 1.0)


        def train(model, batches):
            compiled = torch.compile(model)
            model.register_forward_hook(clip)
            compiled.register_forward_hook(clip)
            for batch in batches:
                compiled(batch).sum().backward()
        """,
        """
        import torch


        def clip(module, inputs, output):
            return output.clamp(-1.0, 1.0)


        def train(model, batches):
            compiled = torch.compile(model)
            for batch in batches:
                handle = model.encoder.register_forward_hook(clip)
                compiled(batch).sum().backward()
                handle.remove()
        """,
    )


def _handles(site: CompileSite) -> tuple[set[str], str] | None:
    """The names a compiled module goes by (`model` and `compiled` for `compiled =
    torch.compile(model)`), and the one whose call runs compiled code; None for what is no
    module by name (a decorator, a lambda)."""
    if site.target is None:
        return None
    module = dotted_name(site.target)
    if module is None:
        return None
    if site.in_place:
        return ({module}, module) if type(site.target) is cst.Name else None
    if site.bound is None or site.runs is not None and site.runs.owner_class is None:
        return None  # a function compiled, or a compiled module called by no name
    return {module, site.bound}, site.bound


def _on_submodule(call: cst.Call, handles: set[str], placed: Placed) -> bool:
    """Whether the hook goes on a submodule of the compiled module: `model.encoder`,
    `model.layers[0]`, `model.get_submodule("head")`, or a module a loop over
    `model.named_modules()` gives."""
    assert type(call.func) is cst.Attribute
    receiver = call.func.value
    if _below(receiver, handles):
        return True
    if type(receiver) is not cst.Name:
        return False
    for loop in placed.loops:
        if not isinstance(loop, cst.For) or receiver.value not in set(target_names(loop.target)):
            continue
        walked = loop.iter
        if type(walked) is cst.Call and type(walked.func) is cst.Attribute and walked.func.attr.value in _SUBMODULE_WALKS:
            owner = walked.func.value
            if dotted_name(owner) in handles or _below(owner, handles):
                return True
    return False


def _below(node: cst.BaseExpression, handles: set[str]) -> bool:
    """``node`` reaches into one of ``handles`` by attributes, indices or `get_submodule(...)`."""
    depth = 0
    while True:
        if depth and dotted_name(node) in handles:
            return True
        if type(node) in (cst.Attribute, cst.Subscript):
            node = node.value
        elif type(node) is cst.Call and type(node.func) is cst.Attribute:
            node = node.func.value
        else:
            return False
        depth += 1


def _uses(order: ScopeOrder, name: str, after: int) -> list[Placed]:
    """Where the scope hands on or calls ``name`` after statement ``after``: every read of it
    but as the object of an attribute (`compiled.parameters()` does not run it)."""
    found: list[Placed] = []
    for number, (statement, parts, loops) in enumerate(order.entries):
        if number <= after:
            continue
        hit = False

        def visit(node: cst.CSTNode) -> bool | None:
            nonlocal hit
            if hit:
                return True
            if type(node) is cst.Attribute and type(node.value) is cst.Name:
                return True
            if type(node) is cst.Name and node.value == name:
                hit = True
            return None

        for part in parts:
            walk(part, visit)
        if hit:
            found.append(Placed(number, loops, statement))
    return found
