from __future__ import annotations

import libcst as cst

from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.scopes import dotted_name, lookup_scope, qualified_name

_RNN_CLASSES = {
    f"torch.nn{module}.{cls}": cls
    for module in ("", ".modules.rnn")
    for cls in ("LSTM", "GRU", "RNN")
}
_CELLS = {"LSTM": "nn.LSTMCell", "GRU": "nn.GRUCell", "RNN": "nn.RNNCell"}


def _rnn_class(node: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """"LSTM", "GRU" or "RNN" when ``node`` is `self.<attr>` or a module global bound to
    such a module. A local alias (`rnn = self.rnn`) is reported where it is taken, which
    is where Dynamo gives up."""
    if isinstance(node, cst.Name) and lookup_scope(ctx.scope, node.value) is not ctx.summary.scope:
        return None
    reference = node
    for _ in range(3):  # `ENCODER = _ENCODER` aliases
        if not isinstance(reference, (cst.Name, cst.Attribute)):
            return None
        value = ctx.assigned_value(reference)
        if isinstance(value, cst.Call):
            return _RNN_CLASSES.get(_qualified_in_init(value.func, reference, ctx) or "")
        reference = value
    return None


def _qualified_in_init(func: cst.BaseExpression, reference: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """The constructor's name, resolved where `self.<attr> = ...` was written when it was."""
    function = ctx.function.method if ctx.function is not None else None
    is_self_attribute = (
        isinstance(reference, cst.Attribute)
        and function is not None
        and isinstance(reference.value, cst.Name)
        and reference.value.value == function.self_name
    )
    if is_self_attribute and "__init__" in function.owner_class.methods:
        return qualified_name(func, function.owner_class.methods["__init__"].scope)
    return ctx.qualified_name(func)


class RnnModuleCall(Rule):
    code = "TL511"
    name = "rnn-module-call"
    message = (
        "Dynamo does not trace `nn.LSTM`, `nn.GRU` or `nn.RNN` modules: using one makes it run the "
        "whole function eagerly; step an `nn.LSTMCell`/`nn.GRUCell` over the sequence instead"
    )
    suggestion = (
        "keep the weights in an `nn.LSTMCell` (or `nn.GRUCell`, `nn.RNNCell`) and step it over the "
        "sequence in a Python `for` loop, which Dynamo unrolls; or run the recurrent encoder outside "
        "the compiled function"
    )
    gb_ids = ("GB0014",)
    gb_types = ("Attempted to wrap RNN, GRU, or LSTM",)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        func = node.func
        # `self.lstm(x)` and `self.lstm.forward(x)` are the call; other uses are references.
        target = func.value if isinstance(func, cst.Attribute) and func.attr.value == "forward" else func
        cls = _rnn_class(target, ctx)
        if cls is not None:
            ctx.handled.add(id(target))
            self._report(node, target, cls, "calling", ctx)

    def visit_Attribute(self, node: cst.Attribute, ctx: RuleContext) -> None:
        # `self.lstm.hidden_size`, `ENCODER.flatten_parameters()`: any use breaks.
        for reference in (node, node.value):
            if id(reference) in ctx.handled:
                return
            cls = _rnn_class(reference, ctx)
            if cls is not None:
                ctx.handled.add(id(reference))
                self._report(reference, reference, cls, "using", ctx)
                return

    def _report(self, node: cst.CSTNode, module: cst.BaseExpression, cls: str, verb: str, ctx: RuleContext) -> None:
        shown = dotted_name(module) or "the module"
        ctx.report(
            type(self),
            node,
            f"{verb} `{shown}`, an `nn.{cls}`, in compiled code makes Dynamo run the whole function "
            f"eagerly (it does not trace RNN, GRU or LSTM modules); step an `{_CELLS[cls]}` over the "
            "sequence instead, or run the recurrent part outside the compiled function",
        )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.LSTM(8, 8)
                self.head = torch.nn.Linear(8, 3)

            def forward(self, x):
                states, _ = self.encoder(torch.tanh(x))
                return self.head(states)
        """,
        """
        import torch
        from torch import nn

        ENCODER = nn.GRU(8, 8, batch_first=True)


        @torch.compile
        def encode(x: torch.Tensor):
            out, _ = ENCODER(x)
            return out[:, -1]
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = torch.nn.LSTMCell(8, 8)
                self.head = torch.nn.Linear(8, 3)

            def forward(self, x):
                h = x.new_zeros(8)
                c = x.new_zeros(8)
                states = []
                for step in range(x.shape[0]):
                    h, c = self.encoder(x[step], (h, c))
                    states.append(h)
                return self.head(torch.stack(states))
        """,
        """
        import torch
        from torch import nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.GRUCell(8, 8)
                self.proj = nn.Linear(8, 8)

            def forward(self, x, h):
                return self.proj(self.cell(x, h))
        """,
    )
