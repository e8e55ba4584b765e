from __future__ import annotations

import libcst as cst

from torchlint.analysis.conditions import Compiled, Condition, IsModule, all_of, any_of, negated
from torchlint.analysis.scopes import Scope
from torchlint.analysis.summary import ClassInfo, FunctionInfo
from torchlint.rules._rebinding import is_int_literal, reads, small_statements
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext

_REMEDY = (
    "keep the count in a tensor buffer (`self.register_buffer('step', torch.zeros((), dtype=torch.long))`, "
    "then `self.step += 1`), or set `torch._dynamo.config.allow_unspec_int_on_nn_module = True`"
)


def _int_attribute(cls: ClassInfo, attr: str) -> bool:
    """The class starts the attribute as an int (`self.calls = 0`)."""
    return any(is_int_literal(value) for value, _ in cls.attribute_history.get(attr, ()))


def _counting(cls: ClassInfo, attr: str) -> Condition:
    """Where a change of the attribute recompiles: the class is a module, and no method that
    sets it back to a fixed number outside `__init__` runs compiled. A counter reset on every
    call (`self.pooling_mult = 1` before the layers double it) starts each call from the same
    value, which costs one recompile at most; one reset by `reset()` between epochs does not."""
    init = cls.methods.get("__init__")
    init_scope = init.scope if init is not None else None
    resets = {
        method.qualname
        for method in cls.methods.values()
        for value, scope in cls.attribute_history.get(attr, ())
        if is_int_literal(value) and scope is not init_scope and scope is method.scope
    }
    return all_of(IsModule(cls.qualname), *(negated(Compiled(reset)) for reset in sorted(resets)))


def _changes(value: cst.BaseExpression) -> bool:
    """An assignment that sets something other than one fixed number."""
    return not (is_int_literal(value) or isinstance(value, (cst.Name, cst.SimpleString)) and _constant_name(value))


def _constant_name(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in ("True", "False", "None")


class ModuleIntAttributeMutated(Rule):
    code = "TL701"
    name = "module-int-attribute-mutated"
    effect = "recompiles"
    message = (
        "an int attribute of an nn.Module is a constant of the graph: changing it between calls "
        "recompiles on every new value; " + _REMEDY
    )
    suggestion = _REMEDY

    # -- in compiled code: `self.calls += 1` ------------------------------------------------

    def visit_AugAssign(self, node: cst.AugAssign, ctx: RuleContext) -> None:
        self._in_compiled_code(node.target, node, ctx)

    def visit_Assign(self, node: cst.Assign, ctx: RuleContext) -> None:
        if _changes(node.value):
            for target in node.targets:
                self._in_compiled_code(target.target, node, ctx)

    def _in_compiled_code(self, target: cst.BaseExpression, node: cst.CSTNode, ctx: RuleContext) -> None:
        function = ctx.function
        if function is None or not isinstance(target, cst.Attribute) or not isinstance(target.value, cst.Name):
            return
        context = ctx.call_index.method_context(function)
        if context is None or target.value.value != context[0].self_name:
            return
        cls = context[1]
        attr = target.attr.value
        if not _int_attribute(cls, attr):
            return
        # A value only written is never guarded on: `self.x += 1` reads it, `self.x = n` needs a reader.
        uses = () if isinstance(node, cst.AugAssign) else tuple(_uses(cls, attr))
        if not isinstance(node, cst.AugAssign) and not uses:
            return
        message = (
            f"`{target.value.value}.{attr}` is an int attribute of the nn.Module `{cls.qualname}`, a constant of "
            "the graph: changing it here makes every call recompile (up to `recompile_limit`, then the code "
            "runs eagerly)"
        )
        ctx.report(type(self), node, message, related=uses, when=_counting(cls, attr))

    # -- outside: `model.epoch = epoch` in a loop, on a model of the file's own class ---------

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        # Only a class of this file shows which of its attributes are ints read in `forward`;
        # a file whose classes start no attribute as an int has nothing to walk for.
        counters = {
            attr for cls in ctx.summary.classes.values() for attr in cls.attribute_history if _int_attribute(cls, attr)
        }
        if not counters:
            return
        for function, scope, statement in small_statements(ctx.summary):
            node = statement.node
            if isinstance(node, cst.Assign) and statement.in_loop and _changes(node.value):
                targets = [t.target for t in node.targets]
            elif isinstance(node, cst.AugAssign):
                targets = [node.target]
            else:
                continue
            for target in targets:
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name)
                    and target.attr.value in counters
                ):
                    self._from_outside(node, target, target.value, function, scope, ctx)

    def _from_outside(
        self,
        node: cst.CSTNode,
        target: cst.Attribute,
        owner: cst.Name,
        function: FunctionInfo | None,
        scope: Scope,
        ctx: RuleContext,
    ) -> None:
        cls = ctx.call_index.instance_class(owner, function, scope)
        if not isinstance(cls, ClassInfo):
            return
        attr = target.attr.value
        if not _int_attribute(cls, attr):
            return
        uses = tuple(_uses(cls, attr))
        if not uses:
            return
        message = (
            f"`{owner.value}.{attr}` is an int attribute of the nn.Module `{cls.qualname}`, a constant of the "
            "graph: setting it between calls makes every call recompile (up to `recompile_limit`, then the "
            "code runs eagerly)"
        )
        # It stands where a method that reads the attribute is compiled.
        readers = sorted({use.function.qualname for use in uses if use.function is not None})
        ctx.report(
            type(self),
            node,
            message,
            related=uses,
            when=all_of(_counting(cls, attr), any_of(*(Compiled(reader) for reader in readers))),
        )


def _uses(cls: ClassInfo, attr: str) -> list[Finding]:
    """Where the class's methods (but `__init__`) read `self.<attr>`, as places a finding points at."""
    methods = [m for m in cls.methods.values() if m.self_name is not None and m.name != "__init__"]

    def is_read(node: cst.CSTNode, method: FunctionInfo) -> bool:
        return (
            type(node) is cst.Attribute
            and type(node.value) is cst.Name
            and node.value.value == method.self_name
            and node.attr.value == attr
        )

    def written(node: cst.CSTNode) -> bool:
        return type(node) is cst.AssignTarget  # `self.x = ...` is not a read

    return reads(ModuleIntAttributeMutated, methods, lambda m: f"{m.self_name}.{attr}", is_read, written)


ModuleIntAttributeMutated.invalid = (
    """
    import torch


    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls
    """,
    """
    import torch


    class Scheduled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.epoch = 0
            self.proj = torch.nn.Linear(8, 8)

        def forward(self, x):
            return self.proj(x) * (1 + self.epoch)


    def train(batches):
        model = Scheduled()
        compiled = torch.compile(model)
        for epoch, batch in enumerate(batches):
            model.epoch = epoch
            compiled(batch)
    """,
)

ModuleIntAttributeMutated.valid = (
    """
    import torch


    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.temperature = 1.0
            self.training_started = False
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))

        def forward(self, x):
            self.calls += 1
            self.training_started = True
            return x * self.calls / self.temperature


    def train(batches):
        model = Counter()
        compiled = torch.compile(model)
        for step, batch in enumerate(batches):
            model.temperature = 1.0 / (1 + step)
            compiled(batch)
    """,
    """
    class Tally:
        def __init__(self):
            self.seen = 0

        def add(self, n):
            self.seen += n
            return self.seen
    """,
)
