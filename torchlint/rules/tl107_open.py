from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

OPEN_FUNCTIONS = frozenset({"builtins.open", "io.open"})
PATH_CLASSES = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.WindowsPath"}
)
# Building a Path traces fine; reading or writing through it does not.
PATH_IO_METHODS = frozenset({"open", "read_text", "write_text", "read_bytes", "write_bytes"})


def _builds(node: cst.BaseExpression | None, names: frozenset[str], ctx: RuleContext) -> bool:
    return isinstance(node, cst.Call) and ctx.qualified_name(node.func) in names


def _is_path(node: cst.BaseExpression | None, ctx: RuleContext, follow: bool = True) -> bool:
    """`Path(...)`, `Path(...) / "x"`, or a name bound to one of those."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return _is_path(node.left, ctx, follow)
    if _builds(node, PATH_CLASSES, ctx):
        return True
    return follow and node is not None and _is_path(ctx.assigned_value(node), ctx, follow=False)


class OpenInCompiledCode(Rule):
    code = "TL107"
    name = "open-in-compiled-code"
    message = (
        "file I/O in compiled code breaks the graph (Dynamo cannot trace `open()` or the file's "
        "methods; inside a `with` it skips the whole function); do the I/O outside the compiled function"
    )
    suggestion = "open and read the file before calling the compiled function, and pass the data in"
    gb_ids = ("GB0059", "GB0142", "GB0156", "GB0007")
    gb_types = (
        "Failed to trace builtin operator",
        "Unsupported context manager",
        "Unsupported method call",
        "Attempted to call function marked as skipped",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        if ctx.qualified_name(func) in OPEN_FUNCTIONS:
            ctx.report(type(self), node)
        elif isinstance(func, cst.Attribute):
            receiver = func.value
            # `f = open(...)` then `f.write(...)`: each method call breaks again.
            if _builds(ctx.assigned_value(receiver), OPEN_FUNCTIONS, ctx) or (
                func.attr.value in PATH_IO_METHODS and _is_path(receiver, ctx)
            ):
                ctx.report(type(self), node)

    invalid = (
        """
        import os

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                with open(os.devnull, "a") as stats:
                    stats.write(f"activations {tuple(y.shape)}")
                return torch.relu(y)
        """,
        """
        from pathlib import Path

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            Path("runs/last_shape.txt").write_text(str(tuple(x.shape)))
            return x * 2
        """,
    )

    valid = (
        """
        import os

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                if not torch.compiler.is_compiling():
                    with open(os.devnull, "a") as stats:
                        stats.write(f"activations {tuple(y.shape)}")
                return torch.relu(y)
        """,
        """
        import json

        import torch


        class Model(torch.nn.Module):
            def __init__(self, config_path):
                super().__init__()
                with open(config_path) as f:
                    width = json.load(f)["width"]
                self.proj = torch.nn.Linear(width, width)

            def forward(self, x):
                return self.proj(x)
        """,
    )
