from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import GUARD_SUGGESTION
from torchlint.rules.base import Rule

WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})


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
        if ctx.qualified_name(node.func) in WARN_FUNCTIONS:
            ctx.report(type(self), node)
