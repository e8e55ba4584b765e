from __future__ import annotations


import libcst as cst

from torchlint.rules._untraceable_calls import module_level
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.conditions import TRUE, Condition, Disabled
from torchlint.analysis.regions import DISABLE_FUNCTIONS, NAME, Ref
from torchlint.analysis.scopes import dotted_name
from torchlint.analysis.summary import FunctionInfo

_SUGGESTION = (
    "make the helper a `torch.library.custom_op` with a `register_fake` (opaque to Dynamo but "
    "kept in the graph), or call it before or after the compiled function"
)


def _calls_disable(value: cst.BaseExpression | None, ctx: RuleContext) -> bool:
    """`torch.compiler.disable(fn)` and its spellings, as a value bound to a name."""
    return isinstance(value, cst.Call) and ctx.qualified_name(value.func) in DISABLE_FUNCTIONS


class CallToDisabledFunction(Rule):
    code = "TL504"
    name = "call-to-disabled-function"
    message = (
        "calling a `torch.compiler.disable`d function from compiled code breaks the graph; make it "
        "a `torch.library.custom_op` with `register_fake`, or call it outside the compiled code"
    )
    suggestion = _SUGGESTION
    # A plain call is GB0098; a bound method, a module's forward, an __init__ or a
    # `recursive=False` disable is met while inlining and gives GB0099.
    gb_ids = ("GB0098", "GB0099")
    gb_types = (
        "Skip calling `torch.compiler.disable()`d function",
        "Skip inlining `torch.compiler.disable()`d function",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.function is None:
            return
        spelled = dotted_name(node.func)
        if spelled is None:
            return
        found = self._disabled_target(node.func, spelled, ctx)
        if found is None:
            return
        runs, when = found
        shown = f"`{spelled}()`" if runs == spelled else f"`{spelled}()` runs `{runs}`, which"
        ctx.report(
            type(self),
            node,
            f"{shown} is under `torch.compiler.disable`, so calling it from compiled code breaks "
            "the graph; make it a `torch.library.custom_op` with `register_fake`, or call it "
            "outside the compiled code",
            when=when,
        )

    def _disabled_target(
        self, func: cst.BaseExpression, spelled: str, ctx: RuleContext
    ) -> tuple[str, Condition] | None:
        """What the call runs, named for the message, when that is (or, for a function of
        another file, may be) a disabled function; with what must hold for it to be one."""
        # `helper = torch.compiler.disable(helper)`, `self.fast = torch.compiler.disable(self._fast)`
        if _calls_disable(ctx.assigned_value(func), ctx):
            return spelled, TRUE
        target = ctx.call_index.callee(func, ctx.function)
        if isinstance(target, FunctionInfo):
            if target not in ctx.disabled:
                return None
            # `self.encoder(x)` runs Encoder.forward; `Box(y)` runs Box.__init__.
            return (spelled if target.name == spelled.rsplit(".", 1)[-1] else target.qualname), TRUE
        if isinstance(target, Ref) and target.kind == NAME and module_level(spelled, ctx):
            # Only a name the project binds to a disabled function (or an alias of one) may be.
            if ctx.profile.may_be_disabled(target.name.rpartition(".")[2], spelled.rpartition(".")[2]):
                return spelled, Disabled(target)
        return None

    invalid = (
        """
        import torch


        @torch.compiler.disable
        def rms_normalize(y):
            return y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + 1e-6)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                y = rms_normalize(y)
                return y.sum(dim=-1)
        """,
        """
        import torch
        import torch._dynamo


        @torch._dynamo.disable
        def lookup(t):
            return t * 2


        @torch.compile
        def step(x: torch.Tensor):
            return lookup(x + 1)
        """,
    )

    valid = (
        """
        import torch


        def rms_normalize(y):
            return y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + 1e-6)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                y = rms_normalize(y)
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compiler.disable
        def report(t):
            print("output", t.shape)


        @torch.compile
        def step(x: torch.Tensor):
            return x * 2


        def run(x):
            y = step(x)
            report(y)
            return y
        """,
    )
