from __future__ import annotations

import libcst as cst

from torchlint.analysis.scopes import Scope, assigned_value, qualified_name
from torchlint.analysis.summary import FunctionInfo
from torchlint.report.diagnostic import Applicability
from torchlint.rules._setup_code import RETURNS_SELF, ScopeOrders
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext
from torchlint.rules.fixes import FixPlan, binds_torch, replace_node

# Parts of torch.nn that hold no module classes.
_NOT_MODULES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.parameter.", "torch.nn.attention.")
# Classes whose forward calls the modules they are given (a user's module given to one is compiled
# when it is called): flagged only where every module they hold is torch.nn's own.
_HOLDERS = frozenset(
    {"Sequential", "ModuleList", "ModuleDict", "TransformerEncoder", "TransformerDecoder", "Transformer",
     "DataParallel", "DistributedDataParallel"}
)
# Holders without a forward of their own: `torch.compile` of one has nothing to call either.
_NO_FORWARD = frozenset({"ModuleList", "ModuleDict"})


class CompileOfTorchNnModule(Rule):
    code = "TL711"
    name = "compile-of-torch-nn-module"
    message = (
        "`.compile()` on a module whose forward lives in torch.nn compiles nothing: Dynamo skips torch.nn's "
        "own frames; use `module = torch.compile(module)`"
    )
    suggestion = "`model = torch.compile(model)` instead of `model.compile()`"
    fixes = (Applicability.UNSAFE,)

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        summary = ctx.summary
        for call, scope, function in summary.calls:
            func = call.func
            if type(func) is not cst.Attribute or func.attr.value != "compile":
                continue
            receiver = func.value
            built = _built_by(receiver, scope, function)
            if built is None:
                continue
            constructor, cls = built
            if not _only_torch_nn(constructor, scope, ctx):
                continue
            if cls in _NO_FORWARD:
                message = (
                    f"`.compile()` on a `torch.nn.{cls}` compiles nothing: it has no forward, and the modules it holds "
                    "are not compiled by it; compile the module that calls them, or each of them with "
                    "`torch.compile(...)`"
                )
                ctx.report(type(self), call, message)
                continue
            message = (
                f"`.compile()` on a `torch.nn.{cls}` compiles nothing: `Module.compile()` compiles the module's "
                "`_call_impl`, and Dynamo skips torch.nn's own frames, so every call runs eagerly; use "
                "`module = torch.compile(module)`, which wraps the module so that its forward is traced"
            )
            ctx.report(type(self), call, message, fix=_rewrite(call, receiver, scope, function, ctx))

    invalid = (
        """
        import torch
        from torch import nn


        def build():
            model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
            model.compile()
            return model
        """,
        """
        import torch


        class Classifier(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.TransformerEncoder(
                    torch.nn.TransformerEncoderLayer(16, 2, batch_first=True), num_layers=2
                )
                self.encoder.compile(dynamic=False)
                self.head = torch.nn.Linear(16, 2)

            def forward(self, x):
                return self.head(self.encoder(x).mean(1))
        """,
    )

    valid = (
        """
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                return torch.relu(self.proj(x))


        def build():
            model = nn.Sequential(Block(), nn.Linear(8, 8))
            model.compile()
            block = Block()
            block.compile()
            head = torch.compile(nn.Linear(8, 8))
            return model, block, head
        """,
        """
        import re

        import torch
        from torch import nn


        def build(layers):
            pattern = re.compile(r"layer\\.\\d+")
            stack = nn.Sequential(*layers)
            stack.compile()
            return pattern, stack
        """,
    )


def _built_by(
    receiver: cst.BaseExpression, scope: Scope, function: FunctionInfo | None
) -> tuple[cst.Call, str] | None:
    """The `torch.nn.<Class>(...)` call the receiver of `.compile()` was made by (through
    `.to(...)`, `.eval()` and the like, a name's last assignment, a `self.<attr>` set in the class),
    with the class's name; None where it is not one."""
    for _ in range(4):  # bounded: `m = m.eval()` refers to itself
        while type(receiver) is cst.Call and type(receiver.func) is cst.Attribute and receiver.func.attr.value in RETURNS_SELF:
            receiver = receiver.func.value
        if type(receiver) is cst.Call:
            cls = _torch_nn_class(receiver.func, scope)
            return (receiver, cls) if cls is not None else None
        if type(receiver) is cst.Name:
            value = assigned_value(receiver, scope)
            if value is None:
                return None
            receiver = value
            continue
        if type(receiver) is cst.Attribute and type(receiver.value) is cst.Name and function is not None:
            method = function.method
            owner = method.owner_class if method is not None else None
            if owner is None or receiver.value.value != method.self_name:
                return None
            history = owner.attribute_history.get(receiver.attr.value, ())
            if len(history) != 1:
                return None  # set in several places: which one is compiled is not known here
            receiver, scope = history[0]
            function = None
            continue
        return None
    return None


def _torch_nn_class(func: cst.BaseExpression, scope: Scope) -> str | None:
    name = qualified_name(func, scope)
    if name is None or not name.startswith("torch.nn.") or name.startswith(_NOT_MODULES):
        return None
    last = name.rsplit(".", 1)[1]
    return last if last[:1].isupper() and last != "Parameter" else None


def _only_torch_nn(constructor: cst.Call, scope: Scope, ctx: RuleContext) -> bool:
    """Nothing of the user's runs when the module is called: a holder's modules are all torch.nn's
    own (built where it is), and no argument is a function or a class of the user's."""
    cls = _torch_nn_class(constructor.func, scope) or ""
    for arg in constructor.args:
        value = arg.value
        if type(value) is cst.Lambda:
            return False
        if type(value) is cst.Call:
            inner = _torch_nn_class(value.func, scope)
            if inner is not None:
                if not _only_torch_nn(value, scope, ctx):
                    return False
                continue
        if cls in _HOLDERS and not _holds_torch_nn_only(value, scope, ctx):
            return False
        if type(value) in (cst.Name, cst.Attribute) and _may_be_user_code(value, scope, ctx):
            return False
    return True


def _holds_torch_nn_only(value: cst.BaseExpression, scope: Scope, ctx: RuleContext) -> bool:
    """What a holder is given: torch.nn modules built there, a list or dict literal of them, or a
    plain number (`num_layers=2`)."""
    if type(value) in (cst.Integer, cst.Float, cst.SimpleString) or (
        type(value) is cst.Name and value.value in ("True", "False", "None")
    ):
        return True
    if type(value) is cst.Call:
        return _torch_nn_class(value.func, scope) is not None and _only_torch_nn(value, scope, ctx)
    if type(value) in (cst.List, cst.Tuple):
        return all(
            not isinstance(element, cst.StarredElement) and _holds_torch_nn_only(element.value, scope, ctx)
            for element in value.elements
        )
    if type(value) is cst.Dict:
        return all(
            isinstance(element, cst.DictElement) and _holds_torch_nn_only(element.value, scope, ctx)
            for element in value.elements
        )
    if type(value) is cst.Name:
        assigned = assigned_value(value, scope)
        return assigned is not None and _holds_torch_nn_only(assigned, scope, ctx)
    return False


def _may_be_user_code(value: cst.BaseExpression, scope: Scope, ctx: RuleContext) -> bool:
    """A function or a class of the project handed to a torch.nn module (`activation=my_gelu`):
    the module calls it, and Dynamo compiles it."""
    name = qualified_name(value, scope)
    if name is None:
        return ctx.call_index.local_function(value, scope) is not None or ctx.call_index.local_class(value, scope) is not None
    return not name.startswith(("torch.", "builtins.", "math.", "operator."))


def _rewrite(
    call: cst.Call, receiver: cst.BaseExpression, scope: Scope, function: FunctionInfo | None, ctx: RuleContext
) -> FixPlan | None:
    """`model.compile(...)` as a statement of its own -> `model = torch.compile(model, ...)`.
    Unsafe: the module now runs compiled, and `model` names the wrapper, whose `state_dict()`
    keys start with `_orig_mod.`. Only where the module binds `torch` under that name."""
    module = ctx.summary.module
    if type(receiver) is not cst.Name or not binds_torch(module) or qualified_name(cst.Name("torch"), scope) != "torch":
        return None  # no `torch` to call here, or a local one shadows it
    placed = ScopeOrders(ctx.summary).of(function).place([call]).get(id(call))
    statement = placed.statement if placed is not None else None
    if not (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and statement.body[0].value is call
    ):
        return None
    options = ", ".join(module.code_for_node(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for arg in call.args)
    arguments = receiver.value + (f", {options}" if options else "")
    return replace_node(
        call, f"{receiver.value} = torch.compile({arguments})", f"Wrap it: `{receiver.value} = torch.compile(...)`",
        Applicability.UNSAFE,
    )
