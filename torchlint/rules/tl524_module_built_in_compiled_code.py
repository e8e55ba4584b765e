from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import is_break
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

    def finish_function(self, findings: list[Finding], ctx: RuleContext) -> None:
        function = ctx.function
        if function is None or function.method is not function or function.name != "__init__":
            return
        cls = function.owner_class
        if ctx.call_index.module_reason(cls) is None:
            return
        breaks = tuple(f for f in findings if f.function is function and is_break(f))
        call = _base_init_call(function.node)
        if breaks and call is not None:
            more = f" and {len(breaks) - 1} more" if len(breaks) > 1 else ""
            ctx.report(
                type(self),
                call,
                f"`{cls.qualname}` is built inside compiled code and its `__init__` breaks the graph "
                f"({breaks[0].rule.code}{more}): Dynamo then compiles `__init__` on its own, meets the "
                "module before `nn.Module.__init__` has run and skips the frame (Uninitialized nn.Module)",
                related=breaks,
                function=function,
            )

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

