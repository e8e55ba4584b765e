from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._untraceable_calls import module_level
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.fixes import FixPlan, replace_node
from torchlint.analysis.conditions import TRUE, Condition, OptionalKeys
from torchlint.analysis.regions import NAME, Ref
from torchlint.analysis.scopes import dotted_name
from torchlint.analysis.typed_dicts import has_optional_keys

_LITERAL = "a dict literal with the same keys (`{...}`), which is the same dict and compiles"


def _optional_key_class(func: cst.BaseExpression, ctx: RuleContext) -> tuple[str, Condition] | None:
    """The name of the TypedDict class with optional keys that ``func`` calls, if it may be one,
    with what must hold for it to be: a class of this file that is one, or a class imported
    from another file of the project that the project finds to be one."""
    local = ctx.call_index.local_class(func, ctx.scope)
    if local is not None:
        return (local.qualname, TRUE) if has_optional_keys(local, ctx.call_index.local_bases) else None
    spelled = dotted_name(func)
    if spelled is None or not module_level(spelled, ctx) or ctx.function is None:
        return None
    if not ctx.profile.may_be_typed_dict(spelled.rpartition(".")[2]):
        return None  # no TypedDict of the project has that name (nor an alias of one)
    refs = [target for target, _ in ctx.call_index.callees(func, ctx.function) if isinstance(target, Ref)]
    if not refs or refs[0].kind != NAME:
        return None
    if not ctx.profile.may_be_typed_dict(refs[0].name.rpartition(".")[2], spelled.rpartition(".")[2]):
        return None
    return spelled, OptionalKeys(refs[0])


def _as_literal(node: cst.Call, module: cst.Module) -> FixPlan | None:
    """`Message(name=n, value=v)` -> `{"name": n, "value": v}`: a TypedDict call makes that dict.
    Only for keyword arguments: a mapping passed positionally would need its keys."""
    if any(arg.keyword is None or arg.star for arg in node.args):
        return None
    items = ", ".join(f'"{arg.keyword.value}": {module.code_for_node(arg.value)}' for arg in node.args)
    return replace_node(node, "{" + items + "}", "Build a dict literal", Applicability.SAFE)


class TypedDictWithOptionalKeys(Rule):
    code = "TL523"
    name = "typed-dict-with-optional-keys"
    message = (
        "calling a TypedDict class with optional keys (`total=False`, `NotRequired[...]`) in compiled "
        "code breaks the graph; build " + _LITERAL
    )
    suggestion = "build " + _LITERAL + "; annotate the variable with the class to keep the type"
    fixes = (Applicability.SAFE,)
    gb_ids = ("GB0257",)
    gb_types = ("TypedDict with optional keys",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        found = _optional_key_class(node.func, ctx)
        if found is None:
            return
        name, when = found
        ctx.report(
            type(self),
            node,
            f"calling `{name}`, a TypedDict with optional keys, in compiled code breaks the graph; build "
            + _LITERAL,
            fix=_as_literal(node, ctx.summary.module),
            when=when,
        )

    invalid = (
        """
        from typing import TypedDict

        import torch


        class Message(TypedDict, total=False):
            name: str
            value: torch.Tensor


        class Model(torch.nn.Module):
            def forward(self, x):
                msg = Message(name="x", value=x)
                return msg["value"] * 2
        """,
        """
        from typing import TypedDict

        import torch
        from typing_extensions import NotRequired


        class Config(TypedDict):
            scale: float
            bias: NotRequired[torch.Tensor]


        @torch.compile
        def step(x: torch.Tensor):
            config = Config(scale=2.0)
            return x * config["scale"]
        """,
    )

    valid = (
        """
        from typing import TypedDict

        import torch


        class Message(TypedDict, total=False):
            name: str
            value: torch.Tensor


        class Model(torch.nn.Module):
            def forward(self, x):
                msg: Message = {"name": "x", "value": x}
                return msg["value"] * 2
        """,
        """
        from typing import TypedDict

        import torch


        class Config(TypedDict):
            scale: float
            bias: torch.Tensor


        @torch.compile
        def step(x: torch.Tensor):
            config = Config(scale=2.0, bias=x)
            return x * config["scale"] + config["bias"]
        """,
    )
