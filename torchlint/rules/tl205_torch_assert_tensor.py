from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._data_dependent import constant_message
from torchlint.rules.base import Rule
from torchlint.rules.fixes import FixPlan, replace_node
from torchlint.rules.context import RuleContext


def _on_the_device(call: cst.Call) -> FixPlan | None:
    """`torch._assert(cond, "msg")` -> `torch._assert_async(cond, "msg")`, spelled through the
    file's own name for torch. Unsafe: a failed check raises a RuntimeError (on a GPU, later)
    instead of an AssertionError. None for a message built at run time, which would break too."""
    func = call.func
    messages = [arg.value for arg in call.args[1:]]
    if not isinstance(func, cst.Attribute) or not all(constant_message(message) for message in messages):
        return None
    return replace_node(func.attr, "_assert_async", "Check on the device with `torch._assert_async`", Applicability.UNSAFE)


class TorchAssertOnTensor(Rule):
    code = "TL205"
    name = "torch-assert-on-tensor"
    message = "`torch._assert()` on a tensor condition reads the data, which breaks the graph"
    suggestion = "check on the device: `torch._assert_async(cond, \"message\")`"
    fixes = (Applicability.UNSAFE,)
    gb_ids = ("GB0033",)
    gb_types = ("Data dependent operator",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) != "torch._assert" or not node.args:
            return
        if ctx.is_tensor(node.args[0].value):
            ctx.report(type(self), node, self.message, fix=_on_the_device(node))

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                probs = self.proj(x).softmax(dim=-1)
                torch._assert((probs >= 0).all(), "softmax gave a negative probability")
                return probs.log()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            torch._assert(x.sum() > -100, "sum too small")
            return x * 2
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                probs = self.proj(x).softmax(dim=-1)
                torch._assert_async((probs >= 0).all(), "softmax gave a negative probability")
                return probs.log()
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, y: torch.Tensor):
            torch._check(y.shape[0] == x.shape[0])
            return x + y
        """,
    )
