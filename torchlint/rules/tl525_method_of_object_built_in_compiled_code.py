from __future__ import annotations


from torchlint.analysis.conditions import Breaks
from torchlint.rules._frame_skips import breaks_by_function, breaks_met, first_and_more
from torchlint.rules.base import MetBreak, Rule
from torchlint.rules.context import BreakMet, Finding, RuleContext
from torchlint.analysis.built_objects import built_object_call
from torchlint.analysis.summary import FunctionInfo


class MethodOfObjectBuiltInCompiledCode(Rule):
    code = "TL525"
    name = "method-of-object-built-in-compiled-code"
    message = (
        "this method breaks the graph and is called on an object built in the compiled function: Dynamo "
        "cannot rebuild the bound method to resume after the break and runs the whole function eagerly"
    )
    suggestion = (
        "fix the break inside the method (the related finding says how); or build the object outside "
        "the compiled function and pass it in, so that the break is an ordinary one"
    )
    gb_ids = ("GB0092",)
    gb_types = ("Reconstruction failure",)

    def finish_file(self, findings: list[Finding], ctx: RuleContext) -> None:
        if ctx.in_fullgraph:
            return  # the compile fails at the inner break: nothing is skipped
        breaks = breaks_by_function(findings)
        for function in ctx.summary.functions:
            if function in ctx.disabled:
                continue
            for call in function.calls:
                built = built_object_call(call, function, ctx.call_index)
                if built is None:
                    continue
                met: list[BreakMet] = []
                for method in built.methods:
                    if isinstance(method, FunctionInfo):
                        met.extend(m for m in breaks_met(method, breaks, ctx) if m not in met)
                    else:
                        met.append(BreakMet(Breaks(method), callee=f"{built.class_name}.{call.func.attr.value}"))
                if met:
                    ctx.report(
                        type(self),
                        call,
                        function=function,
                        breaks_met=tuple(met),
                        restate=(built.class_name, call.func.attr.value, function.qualname),
                    )

    @classmethod
    def restate(cls, args: tuple[str, ...], met: list[MetBreak]) -> str:
        class_name, method, function = args
        codes = [m.code for m in met if m.code is not None]
        where = f" ({first_and_more(codes, sum(m.callee is not None for m in met))})" if codes else ""
        return (
            f"`{class_name}.{method}` breaks the graph{where} and is called on a `{class_name}` built in "
            f"this compiled function: Dynamo cannot rebuild the bound method to resume after the break "
            f"(Reconstruction failure) and runs `{function}` eagerly, uncompiled"
        )

    invalid = (
        """
        import torch


        class Solver:
            def __init__(self, y0):
                self.y0 = y0

            def integrate(self, t):
                if t.max() > 10:
                    raise ValueError("t is too large")
                return self.y0 * torch.exp(-t)


        @torch.compile
        def odeint(y0: torch.Tensor, t: torch.Tensor):
            solver = Solver(y0)
            return solver.integrate(t)
        """,
        """
        import torch


        class Scaler:
            def apply(self, x):
                print("scaling")
                return x * 2


        @torch.compile
        def scale(x: torch.Tensor):
            return Scaler().apply(x)
        """,
    )

    valid = (
        """
        import torch


        class Solver:
            def __init__(self, y0):
                self.y0 = y0

            def integrate(self, t):
                return self.y0 * torch.exp(-t)


        @torch.compile
        def odeint(y0: torch.Tensor, t: torch.Tensor):
            solver = Solver(y0)
            return solver.integrate(t)
        """,
        """
        import torch


        class Solver:
            def __init__(self, y0):
                self.y0 = y0

            def integrate(self, t):
                if t.max() > 10:
                    raise ValueError("t is too large")
                return self.y0 * torch.exp(-t)


        @torch.compile
        def odeint(solver: Solver, t: torch.Tensor):
            return solver.integrate(t)
        """,
    )
