from __future__ import annotations

import libcst as cst

from torchlint.rules._frame_skips import breaks_by_function, breaks_met, first_and_more, gb_ids_of
from torchlint.rules.base import Rule
from torchlint.rules.context import Finding, RuleContext
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
        breaks = breaks_by_function(findings)
        facts = ctx.project_facts
        told = facts.breaking_built_calls if facts is not None else frozenset()
        if not breaks and not told:
            return
        fullgraph = getattr(ctx.regions, "fullgraph", ())
        for function in ctx.regions.compiled:
            if function in fullgraph:
                continue  # the compile fails at the inner break: nothing is skipped
            for call in function.calls:
                built = built_object_call(call, function, ctx.call_index)
                if built is None:
                    continue
                inner: list[Finding] = []
                for method in built.methods:
                    if isinstance(method, FunctionInfo) and method in ctx.regions.compiled:
                        inner.extend(f for f in breaks_met(method, breaks, frozenset(), ctx)[0] if f not in inner)
                if inner or built.key in told:
                    self._report(call, built.class_name, call.func.attr.value, inner, function, ctx)

    def _report(
        self, call: cst.Call, class_name: str, method: str, inner: list[Finding], function: FunctionInfo, ctx: RuleContext
    ) -> None:
        where = f" ({first_and_more(inner)})" if inner else ""
        ctx.report(
            type(self),
            call,
            f"`{class_name}.{method}` breaks the graph{where} and is called on a `{class_name}` built in "
            f"this compiled function: Dynamo cannot rebuild the bound method to resume after the break "
            f"(Reconstruction failure) and runs `{function.qualname}` eagerly, uncompiled",
            related=tuple(inner),
            gb_ids=gb_ids_of(self.gb_ids, inner),
            function=function,
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
