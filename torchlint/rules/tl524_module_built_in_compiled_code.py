from __future__ import annotations

import libcst as cst

from torchlint.analysis.conditions import IsModule
from torchlint.rules._frame_skips import breaks_by_function, breaks_met, first_and_more
from torchlint.rules.base import MetBreak, Rule
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
        for function in ctx.summary.functions:
            if function.method is not function or function.name != "__init__" or function in ctx.disabled:
                continue
            cls = function.owner_class
            call = _base_init_call(function.node)
            if call is None:
                continue
            met = breaks_met(function, breaks, ctx)
            if met:
                ctx.report(
                    type(self),
                    call,
                    function=function,
                    when=IsModule(cls.qualname),
                    breaks_met=tuple(met),
                    restate=(cls.qualname,),
                )

    @classmethod
    def restate(cls, args: tuple[str, ...], met: list[MetBreak]) -> str:
        codes = [m.code for m in met if m.code is not None]
        callees = [m.callee for m in met if m.callee is not None]
        if codes:
            what = f"its `__init__` breaks the graph ({first_and_more(codes, len(callees))})"
        else:
            what = f"its `__init__` calls `{callees[0]}`, which breaks the graph in another file"
        return (
            f"`{args[0]}` is built inside compiled code and {what}: Dynamo then compiles `__init__` on its "
            "own, meets the module before `nn.Module.__init__` has run and skips the frame (Uninitialized "
            "nn.Module)"
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

