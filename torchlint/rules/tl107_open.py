from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule

OPEN_FUNCTIONS = frozenset({"builtins.open", "io.open"})


class OpenInCompiledCode(Rule):
    code = "TL107"
    name = "open-in-compiled-code"
    message = (
        "`open()` in compiled code breaks the graph (Dynamo cannot trace file I/O; inside a "
        "`with` it skips the whole function); do the I/O outside the compiled function"
    )
    suggestion = "open and read the file before calling the compiled function, and pass the data in"
    gb_ids = ("GB0059", "GB0142")
    gb_types = ("Failed to trace builtin operator", "Unsupported context manager")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualified_name(node.func) in OPEN_FUNCTIONS:
            ctx.report(type(self), node)
