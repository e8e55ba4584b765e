from __future__ import annotations

import libcst as cst

from torchlint.rules._untraceable_calls import built_by, report_call, spelled
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

# What gives a handle on a shared library; its attributes are the library's C functions.
LIBRARY_LOADERS = frozenset(
    {
        "ctypes.CDLL", "ctypes.PyDLL", "ctypes.WinDLL", "ctypes.OleDLL",
        "ctypes.cdll.LoadLibrary", "ctypes.pydll.LoadLibrary", "ctypes.windll.LoadLibrary",
        "ctypes.oledll.LoadLibrary",
    }
)
_REMEDY = "call it once outside the compiled function and pass the result in, or use a torch op"


def _foreign_function(func: cst.BaseExpression, ctx: RuleContext) -> bool:
    """`lib.fn` (or a name bound to it) where `lib` was loaded through ctypes in this file."""
    inline = True
    if isinstance(func, cst.Name):
        func, inline = ctx.assigned_value(func), False
    if not isinstance(func, cst.Attribute):
        return False
    # `ctypes.CDLL(path).fn(...)`: the loading call in the same expression is reported instead.
    if inline and isinstance(func.value, cst.Call):
        return False
    return built_by(func.value, LIBRARY_LOADERS, ctx) is not None


class CtypesCall(Rule):
    code = "TL512"
    name = "ctypes-call"
    message = "a call through `ctypes` in compiled code breaks the graph (Dynamo cannot trace C calls); " + _REMEDY
    suggestion = (
        "compute the value before calling the compiled function (or once in `__init__`) and pass it in; "
        "for math on tensors use the torch op (`torch.cos(t)`); wrap a C kernel that must run inside as a "
        "`torch.library.custom_op`"
    )
    gb_ids = ("GB0156", "GB0007", "GB8977")
    gb_types = (
        "Unsupported method call",
        "Attempted to call function marked as skipped",
        "Invalid call to __build_class__",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if (name is not None and name.startswith("ctypes.")) or _foreign_function(node.func, ctx):
            report_call(
                type(self),
                node,
                ctx,
                f"`{spelled(node)}` calls through `ctypes` in compiled code, which breaks the graph "
                "(Dynamo cannot trace C calls)",
                _REMEDY,
            )

    invalid = (
        """
        import ctypes

        import torch

        _libm = ctypes.CDLL("libm.so.6")
        _libm.cos.restype = ctypes.c_double
        _libm.cos.argtypes = (ctypes.c_double,)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.angle = 0.5

            def forward(self, x):
                scale = _libm.cos(self.angle)
                return self.proj(x) * scale
        """,
        """
        import ctypes

        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self._lib = ctypes.CDLL("libm.so.6")

            def forward(self, x):
                return self.proj(x) * self._lib.cos(0.5)
        """,
    )

    valid = (
        """
        import ctypes

        import torch

        _libm = ctypes.CDLL("libm.so.6")
        _libm.cos.restype = ctypes.c_double
        _libm.cos.argtypes = (ctypes.c_double,)


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.scale = _libm.cos(0.5)

            def forward(self, x):
                return self.proj(x) * self.scale
        """,
        """
        import math

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            return x * math.cos(0.5)
        """,
    )
