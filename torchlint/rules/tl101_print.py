from __future__ import annotations

import libcst as cst

from torchlint.rules._side_effects import GUARD_SUGGESTION
from torchlint.rules.base import Rule


class PrintInCompiledCode(Rule):
    code = "TL101"
    name = "print-in-compiled-code"
    message = (
        "`print()` in compiled code breaks the graph (Dynamo cannot trace the builtin); "
        "guard it with `torch.compiler.is_compiling()` or move it out"
    )
    suggestion = GUARD_SUGGESTION.format(call="print")
    gb_ids = ("GB0059",)
    gb_types = ("Failed to trace builtin operator",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        # Under `reorderable_logging_functions = {print}` Dynamo moves the call after the graph.
        if ctx.qualified_name(node.func) == "builtins.print" and not ctx.profile.reorders("print", "builtins.print"):
            ctx.report(type(self), node)
