from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import breaks_by_function, breaks_met, first_and_more
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext


class ModuleBuiltInCompiledCode(Rule):
    code = "TL524"
    name = "module-built-in-compiled-code"
    message = (
        "this nn.Module is built inside compiled code and its `__init__` breaks the graph: Dynamo then "
        "compiles `__init__` on its own, meets the module before it is initialised and skips it"
    )
    suggestion = (
        "build the module once outside compiled code (in the parent's `__init__`) and only call it in "
        "compiled code; or fix the break in `__init__` (the related finding says how)"
    )
    gb_ids = ("GB0119",)
    gb_types = ("Uninitialized nn.Module",)

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        breaks = breaks_by_function(findings)
        facts = ctx.project_facts
        told = facts.breaking_calls if facts is not None else frozenset()
        for function in ctx.regions.compiled:
            if function.method is not function or function.name != "__init__":
                continue
            cls = function.owner_class
            call = _base_init_call(function.node)
            if call is None or ctx.call_index.module_reason(cls) is None:
                continue
            inner, elsewhere = breaks_met(function, breaks, told, ctx)
            if inner or elsewhere:
                ctx.report(type(self), call, _message(cls.qualname, inner, elsewhere), related=tuple(inner), function=function)

    invalid = (
        """
        import torch
        from torch import nn


        class Lowpass(nn.Module):
            def __init__(self, cutoffs):
                super().__init__()
                if cutoffs.max() > 0.5:
                    raise ValueError("a cutoff above 0.5 does not make sense")
                self.register_buffer("cutoffs", cutoffs)

            def forward(self, x):
                return x * self.cutoffs


        @torch.compile
        def lowpass(x: torch.Tensor, cutoffs: torch.Tensor):
            return Lowpass(cutoffs)(x)
        """,
        """
        import torch
        from torch import nn


        class Gate(nn.Module):
            def __init__(self, scores):
                nn.Module.__init__(self)
                self.threshold = scores.mean().item()

            def forward(self, x):
                return x * (x > self.threshold)


        class Router(nn.Module):
            def forward(self, x, scores):
                return Gate(scores)(x)
        """,
    )

    valid = (
        """
        import torch
        from torch import nn


        class Lowpass(nn.Module):
            def __init__(self, cutoffs):
                super().__init__()
                self.register_buffer("cutoffs", cutoffs)

            def forward(self, x):
                return x * self.cutoffs


        @torch.compile
        def lowpass(x: torch.Tensor, cutoffs: torch.Tensor):
            return Lowpass(cutoffs)(x)
        """,
        """
        import torch
        from torch import nn


        class Lowpass(nn.Module):
            def __init__(self, cutoffs):
                super().__init__()
                if cutoffs.max() > 0.5:
                    raise ValueError("a cutoff above 0.5 does not make sense")
                self.register_buffer("cutoffs", cutoffs)

            def forward(self, x):
                return x * self.cutoffs


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lowpass = Lowpass(torch.tensor([0.25]))

            def forward(self, x):
                return self.lowpass(x)
        """,
    )


def _message(cls: str, inner: list[Finding], elsewhere: list[str]) -> str:
    if inner:
        what = f"its `__init__` breaks the graph ({first_and_more(inner, len(elsewhere))})"
    else:
        what = f"its `__init__` calls `{elsewhere[0]}`, which breaks the graph in another file"
    return (
        f"`{cls}` is built inside compiled code and {what}: Dynamo then compiles `__init__` on its own, "
        "meets the module before `nn.Module.__init__` has run and skips the frame (Uninitialized nn.Module)"
    )


def _base_init_call(node: cst.FunctionDef) -> cst.Call | None:
    """`super().__init__(...)` or `nn.Module.__init__(self)` among the statements of `__init__`."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "__init__"
            ):
                return call
    return None

