from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands
from torchlint.rules._tensor_methods import tensor_method
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_DATA_PTR = frozenset({"data_ptr"})


class DataPtrUse(Rule):
    code = "TL304"
    name = "data-ptr-use"
    message = "using `.data_ptr()` in compiled code breaks the graph (Dynamo has no real address to give)"
    suggestion = "compare storage outside the compiled function and pass the result in as a Python bool"
    # torch 2.11 reports a comparison of two pointers as GB0023.
    gb_ids = ("GB5976", "GB0088", "GB0023")
    gb_types = ("Data pointer comparison", "Observed exception", "Builtin `operator.*` comparison with constant `self` failed")

    def visit_Comparison(self, node: cst.Comparison, ctx: RuleContext) -> None:
        self._operands(node, comparison_operands(node), ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx: RuleContext) -> None:
        self._operands(node, [node.left, node.right], ctx)

    def _operands(self, node: cst.CSTNode, operands: list[cst.BaseExpression], ctx: RuleContext) -> None:
        # An unused `t.data_ptr()` traces; computing with the address does not.
        if id(node) in ctx.handled:
            return
        for operand in operands:
            # `p = t.data_ptr()` passes; the arithmetic on `p` is what breaks.
            value = operand if isinstance(operand, cst.Call) else ctx.assigned_value(operand)
            if isinstance(value, cst.Call) and tensor_method(value, _DATA_PTR, ctx):
                ctx.handled.add(id(node))
                ctx.report(type(self), node)
                return

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.Linear(8, 8, bias=False)
                self.decoder = torch.nn.Linear(8, 8, bias=False)

            def forward(self, x):
                h = torch.relu(self.encoder(x))
                if self.decoder.weight.data_ptr() == self.encoder.weight.data_ptr():
                    return h @ self.encoder.weight
                return self.decoder(h)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            p = x.data_ptr()
            return x + (p % 2) * 0
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.Linear(8, 8, bias=False)
                self.decoder = torch.nn.Linear(8, 8, bias=False)
                self.tied = self.decoder.weight is self.encoder.weight

            def forward(self, x):
                h = torch.relu(self.encoder(x))
                if self.tied:
                    return h @ self.encoder.weight
                return self.decoder(h)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            p = y.data_ptr()
            return y
        """,
    )
