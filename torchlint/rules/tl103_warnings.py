from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import GUARD_SUGGESTION
from torchlint.rules.base import Rule

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
    gb_ids = ("GB0007",)
    gb_types = ("Attempted to call function marked as skipped",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = ctx.qualified_name(node.func)
        if name in WARN_FUNCTIONS and not ctx.profile.reorders(name):
            shown = name.removeprefix("warnings.")
            ctx.report(
                type(self),
                node,
                message=f"`warnings.{shown}()` in compiled code breaks the graph (Dynamo skips the "
                "warnings module); guard it with `torch.compiler.is_compiling()` or move it out",
            )
