from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule


class InputInCompiledCode(Rule):
    code = "TL105"
    name = "input-in-compiled-code"
    message = (
        "`input()` in compiled code breaks the graph (Dynamo cannot trace the builtin); "
        "read the value before calling the compiled function and pass it in"
    )
    suggestion = "read the input outside the compiled function and pass the value as an argument"
    gb_ids = ("GB0059",)
    gb_types = ("Failed to trace builtin operator",)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualified_name(node.func) == "builtins.input":
            ctx.report(type(self), node)
