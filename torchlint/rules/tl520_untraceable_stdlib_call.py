from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# Standard-library modules Dynamo skips as a whole: any function of theirs breaks.
_SKIPPED_MODULES = ("json", "pickle", "uuid", "hashlib", "gc", "traceback", "glob", "base64", "zlib")
# Functions of modules Dynamo otherwise traces (`os.environ`, `os.path.join` are fine).
_SKIPPED_FUNCTIONS = frozenset(
    {
        "os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getsize", "os.path.getmtime",
        "os.listdir", "os.scandir", "os.stat", "os.getpid", "os.cpu_count", "os.makedirs",
        "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today", "datetime.date.today",
        "sys.getsizeof", "sys._getframe", "inspect.currentframe", "inspect.stack", "importlib.import_module",
    }
)


def _skipped(name: str | None) -> bool:
    if name is None:
        return False
    return name in _SKIPPED_FUNCTIONS or name.split(".", 1)[0] in _SKIPPED_MODULES and "." in name


class UntraceableStdlibCall(Rule):
    code = "TL520"
    name = "untraceable-stdlib-call"
    message = (
        "a call into a standard-library module Dynamo does not trace (`json`, `pickle`, `hashlib`, the "
        "file system, the clock of `datetime`) breaks the graph; call it outside and pass the result in"
    )
    suggestion = (
        "do the work outside the compiled function and pass the result in, or keep it in Python values "
        "Dynamo traces (`tuple(x.shape)` as a key rather than `json.dumps(list(x.shape))`)"
    )
    gb_ids = ("GB0007", "GB0156")
    gb_types = ("Attempted to call function marked as skipped", "Unsupported method call")

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if _skipped(name):
            module = name.split(".", 1)[0]
            report_call(
                type(self),
                node,
                ctx,
                f"`{spelled(node)}` in compiled code breaks the graph (Dynamo does not trace `{module}`)",
                "call it outside the compiled function and pass the result in",
            )

    invalid = (
        """
        import json

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.shapes_seen = set()

            def forward(self, x):
                self.shapes_seen.add(json.dumps(list(x.shape)))
                return self.proj(x)
        """,
        """
        import os

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            if os.path.exists("scale.pt"):
                x = x * 2
            return x
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.shapes_seen = set()

            def forward(self, x):
                self.shapes_seen.add(tuple(x.shape))
                return self.proj(x)
        """,
        """
        import os

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            if os.environ.get("MODEL_DEBUG") == "1":
                x = x * 2
            return x
        """,
    )
