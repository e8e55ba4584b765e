from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._side_effects import GUARD_SUGGESTION, eager_only
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# The whole module is skipped by Dynamo: filters and catch_warnings break like warn.
WARN_FUNCTIONS = frozenset(
    {
        "warnings.warn",
        "warnings.warn_explicit",
        "warnings.simplefilter",
        "warnings.filterwarnings",
        "warnings.resetwarnings",
        "warnings.catch_warnings",
    }
)


class WarningInCompiledCode(Rule):
    code = "TL103"
    name = "warning-in-compiled-code"
    message = (
        "`warnings.warn()` in compiled code breaks the graph (Dynamo skips the warnings module); "
        "guard it with `torch.compiler.is_compiling()`, warn once outside, or list it in "
        "`reorderable_logging_functions`"
    )
    suggestion = GUARD_SUGGESTION.format(call="warnings.warn")
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0007",)
    gb_types = ("Attempted to call function marked as skipped",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if name in WARN_FUNCTIONS and not ctx.profile.reorders(name):
            shown = name.removeprefix("warnings.")
            ctx.report(
                type(self),
                node,
                message=f"`warnings.{shown}()` in compiled code breaks the graph (Dynamo skips the "
                "warnings module); guard it with `torch.compiler.is_compiling()` or move it out",
                fix=eager_only(node, ctx),
            )

    invalid = (
        """
        import warnings

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.Linear(8, 4)

            def forward(self, x):
                warnings.warn("Model.forward(x) is deprecated; use Model.encode(x)", stacklevel=2)
                return torch.tanh(self.encoder(x))
        """,
        """
        from warnings import warn

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            warn("deprecated path")
            return x * 2
        """,
    )

    valid = (
        """
        import warnings

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.Linear(8, 4)

            def forward(self, x):
                if not torch.compiler.is_compiling():
                    warnings.warn("Model.forward(x) is deprecated; use Model.encode(x)", stacklevel=2)
                return torch.tanh(self.encoder(x))
        """,
        """
        import warnings

        import torch


        class Model(torch.nn.Module):
            def __init__(self, width=8):
                super().__init__()
                if width % 8:
                    warnings.warn("a width that is not a multiple of 8 is slow")
                self.encoder = torch.nn.Linear(width, 4)

            def forward(self, x):
                return torch.tanh(self.encoder(x))
        """,
    )
