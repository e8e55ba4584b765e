from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands
from torchlint.rules._untraceable_values import value_before
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_REMEDY = "key a dict by the tensor itself, or compute the value outside the compiled function"


def _hash_of_tensor(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """`hash(t)` of a tensor (or of a tuple holding one), or a name bound to it."""
    if isinstance(node, cst.Name):
        node, _ = value_before(node, ctx)
    if not isinstance(node, cst.Call) or ctx.qualified_name(node.func) != "builtins.hash" or len(node.args) != 1:
        return False
    value = node.args[0].value
    values = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    return any(ctx.kind_of(v) is Kind.TENSOR for v in values)


class HashOfTensor(Rule):
    code = "TL517"
    name = "hash-of-tensor"
    message = f"computing with `hash()` of a tensor in compiled code breaks the graph; {_REMEDY}"
    suggestion = "`cache = {x: value}` works inside the graph; `hash(x) % n` does not"
    # Dynamo hands out a stand-in for the hash that only `==` and dict keys accept:
    # arithmetic fails (GB0088, GB3006 for `*`), so do `-h` (GB0755), `+h` (GB7510),
    # `~h` (GB0059), `abs(h)` (GB9548) and `<`/`>` (GB9316).
    gb_ids = ("GB0088", "GB3006", "GB0755", "GB7510", "GB0059", "GB9548", "GB9316")
    gb_types = (
        "Observed exception",
        "tp_as_number slot not implemented",
        "nb_negative_impl not implemented",
        "nb_positive_impl not implemented",
        "Failed to trace builtin operator",
        "nb_absolute_impl not implemented",
        "Comparison on compile-time-only id or hash value",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx: RuleContext) -> None:
        if _hash_of_tensor(node.left, ctx) or _hash_of_tensor(node.right, ctx):
            self._report(node, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx: RuleContext) -> None:
        if _hash_of_tensor(node.target, ctx):
            self._report(node, ctx)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx: RuleContext) -> None:
        if not isinstance(node.operator, cst.Not) and _hash_of_tensor(node.expression, ctx):
            self._report(node, ctx)

    def visit_Comparison(self, node: cst.Comparison, ctx: RuleContext) -> None:
        operands = comparison_operands(node)
        if any(isinstance(c.operator, _ORDERING) for c in node.comparisons) and any(
            _hash_of_tensor(operand, ctx) for operand in operands
        ):
            self._report(node, ctx)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) == "builtins.abs" and node.args and _hash_of_tensor(node.args[0].value, ctx):
            self._report(node, ctx)

    def _report(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        ctx.report(
            type(self),
            node,
            "computing with `hash()` of a tensor in compiled code breaks the graph (Dynamo has no "
            f"real hash while tracing, and gives up on the whole function); {_REMEDY}",
        )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x: torch.Tensor):
                slot = hash(x) % 1024
                features = {slot: self.proj(x)}
                return torch.relu(features[slot])
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            h = hash(x)
            return x * abs(h)
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
                features = {x: self.proj(x)}
                return torch.relu(features[x])
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, y: torch.Tensor):
            cache = {hash(x): x * 2}
            return cache[hash(x)] + y
        """,
    )
