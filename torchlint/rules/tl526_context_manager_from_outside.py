from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.scopes import lookup_scope
from torchlint.analysis.summary import ClassInfo

_ENTER = "__enter__"


class ContextManagerFromOutside(Rule):
    code = "TL526"
    name = "context-manager-from-outside"
    message = (
        "`with` on a context-manager object made outside the compiled function (an attribute, a "
        "global, an argument) breaks the graph: Dynamo does not know how to enter it"
    )
    suggestion = (
        "build the context manager where it is entered (`with Tracer(...):`), which Dynamo traces; or "
        "enter it around the call to the compiled function"
    )
    gb_ids = ("GB0142",)
    gb_types = ("Unsupported context manager",)

    def visit_With(self, node: cst.With, ctx: RuleContext) -> None:
        for item in node.items:
            cls = _entered_from_outside(item.item, ctx)
            if cls is not None:
                ctx.report(
                    type(self),
                    node,
                    f"`with` on a `{cls.qualname}` made outside the compiled function breaks the graph: "
                    "Dynamo does not know how to enter a context-manager object it did not build "
                    "(Unsupported context manager)",
                    header_only=True,
                )
                return

    invalid = (
        """
        import torch


        class Tracer:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.tracer = Tracer()

            def forward(self, x):
                with self.tracer:
                    return x * 2
        """,
        """
        import torch


        class Tracer:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        @torch.compile
        def step(x: torch.Tensor, tracer: Tracer):
            with tracer:
                return x + 1
        """,
    )

    valid = (
        """
        import torch


        class Tracer:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        class Model(torch.nn.Module):
            def forward(self, x):
                with Tracer():
                    return x * 2
        """,
        """
        import torch


        class Tracer:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        @torch.compile
        def step(x: torch.Tensor):
            tracer = Tracer()
            with tracer:
                return x + 1
        """,
    )


def _entered_from_outside(expression: cst.BaseExpression, ctx: RuleContext) -> ClassInfo | None:
    """The file's context-manager class of ``expression`` when the object comes from outside
    the function: an attribute, a global or an argument. One built in the function (`with
    Tracer():`, or `tracer = Tracer()` then `with tracer:`) is traced."""
    if type(expression) is cst.Call:
        return None
    function = ctx.function
    if type(expression) is cst.Name:
        owner = lookup_scope(function.scope, expression.value)
        if owner is function.scope and expression.value in function.scope.assignments:
            return None  # bound here
    elif type(expression) is not cst.Attribute:
        return None
    cls = ctx.call_index.instance_class(expression, function, function.scope)
    if not isinstance(cls, ClassInfo) or ctx.call_index.find_method(cls, _ENTER) is None:
        return None
    return cls

