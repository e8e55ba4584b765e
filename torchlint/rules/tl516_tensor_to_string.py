from __future__ import annotations

import libcst as cst

from torchlint.parse.cst_walk import comparison_operands
from torchlint.rules._untraceable_values import value_before
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.tl102_logging import LOG_METHODS, is_logger
from torchlint.analysis.kind_vocabulary import Kind

_TO_STRING = {"builtins.str": "str", "builtins.repr": "repr"}
_EMPTY = cst.Module(body=[])
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_REMEDY = "build the string outside the compiled function, or under `if not torch.compiler.is_compiling():`"
# Printing, logging and writing are their own findings (TL101-TL104): a string made for
# them is not reported again.
_STREAMS = ("sys.stdout.", "sys.stderr.")


def _string_like(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    if isinstance(node, _STRINGS):
        return True
    value, _ = value_before(node, ctx)
    return isinstance(value, _STRINGS)


def _tensor_fields(node: cst.FormattedString, ctx: RuleContext, converted: bool) -> list[cst.FormattedStringExpression]:
    """The `{tensor}` fields of an f-string, with (`!r`, `!s`, `!a`) or without a conversion."""
    return [
        part
        for part in node.parts
        if isinstance(part, cst.FormattedStringExpression)
        and (part.conversion is not None) == converted
        and ctx.kind_of(part.expression) is Kind.TENSOR
    ]


# From torch 2.13 on, Dynamo keeps an f-string unformatted until it is used; before, a
# tensor field breaks where the string is built.
_LAZY_FORMATTING = (2, 13)


def _returned_or_asserted(ctx: RuleContext) -> bool:
    """A string only handed back, or an assert's message (TL204's), traced on torch 2.11 too."""
    statement = ctx.statement
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Return, cst.Assert)) for small in statement.body
    )


def _formats_tensor(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A string Dynamo keeps as an unformatted template: `f"{t}"` or `"...".format(t)`.

    It traces while only passed along; using it as a string breaks.
    """
    if isinstance(node, cst.Name):
        node, _ = value_before(node, ctx)
    if isinstance(node, cst.FormattedString):
        return bool(_tensor_fields(node, ctx, converted=False))
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        return _string_like(node.func.value, ctx) and any(
            ctx.kind_of(arg.value) is Kind.TENSOR for arg in node.args if not arg.star
        )
    return False


def _reported_output_call(node: cst.Call, ctx: RuleContext) -> bool:
    """A print, warning, logging or stream write that its own rule reports: one Dynamo is
    told to reorder is not, and the string made for it breaks on its own."""
    name = ctx.qualified_name(node.func) or ""
    if name == "builtins.print":
        return not ctx.profile.reorders("print", name)
    if name == "warnings.warn":
        return not ctx.profile.reorders(name)
    if name.startswith(_STREAMS):
        return True
    func = node.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value in LOG_METHODS and name == f"logging.{func.attr.value}":
        return not ctx.profile.reorders(name)
    return is_logger(func.value, ctx)


class TensorToString(Rule):
    code = "TL516"
    name = "tensor-to-string"
    message = f"turning a tensor into a string in compiled code breaks the graph; {_REMEDY}"
    suggestion = (
        "`if not torch.compiler.is_compiling(): self.summary = repr(y)`; a shape or dtype "
        "(`str(y.shape)`) formats fine inside the graph"
    )
    # str() and `!s`/`!a`: GB0059; repr() and `!r`: GB0569; `"%s" % t`: GB0208 (GB0059 with
    # a tuple, GB0033 for `%d`/`%f`). An f-string or `.format()` of a tensor traces until the
    # string is used: len() GB0088, `+` GB3934, `*` GB9458, `==` GB9648, `in` GB4411,
    # indexing GB4880, a str method GB0156. Before torch 2.13 any f-string field holding a
    # tensor breaks where it is built (GB0175, measured on 2.11).
    gb_ids = (
        "GB0059", "GB0569", "GB0208", "GB0033", "GB0088", "GB3934", "GB9458", "GB9648", "GB4411", "GB4880",
        "GB0156", "GB0175",
    )
    gb_types = (
        "Failed to trace builtin operator",
        "repr() on tensor",
        "torch.* op returned non-Tensor",
        "Data dependent operator",
        "Observed exception",
        "missing sq_concat",
        "sq_repeat_impl not implemented",
        "Missing richcompare_impl override",
        "missing sq_contains",
        "missing_mp_subscript",
        "Unsupported method call",
        "builtin isinstance() cannot determine type of argument",
    )

    # -- a tensor made into a string on the spot ------------------------------------

    def __init__(self) -> None:
        # The arguments of reported print/logging calls in the file being checked: the
        # fix for that call (a guard) removes the string too.
        self._output_args: set[int] = set()

    def start_file(self, ctx: RuleContext) -> None:
        self._output_args = set()

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if id(node) in self._output_args:
            return
        if _reported_output_call(node, ctx):
            self._output_args.update(id(arg.value) for arg in node.args)
            return
        name = ctx.qualified_name(node.func)
        args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if name in _TO_STRING and len(args) == 1 and ctx.kind_of(args[0]) is Kind.TENSOR:
            self._report(node, f"`{_TO_STRING[name]}()` of a tensor", ctx)
        elif name == "builtins.len" and len(args) == 1 and _formats_tensor(args[0], ctx):
            self._report_use(node, "`len()` of", ctx)
        elif isinstance(node.func, cst.Attribute) and _formats_tensor(node.func.value, ctx):
            self._report_use(node, f"calling `.{node.func.attr.value}()` on", ctx)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "join" and any(
            isinstance(arg, (cst.List, cst.Tuple)) and any(_formats_tensor(e.value, ctx) for e in arg.elements)
            for arg in args
        ):
            self._report_use(node, "joining", ctx)

    def visit_FormattedString(self, node: cst.FormattedString, ctx: RuleContext) -> None:
        if id(node) in self._output_args:
            return
        fields = _tensor_fields(node, ctx, converted=True)
        if fields:
            shown = _EMPTY.code_for_node(fields[0].expression)
            self._report(node, f"the f-string field `{{{shown}!{fields[0].conversion}}}` of a tensor", ctx)
        elif ctx.profile.torch_before(_LAZY_FORMATTING) and not _returned_or_asserted(ctx) and _tensor_fields(node, ctx, converted=False):
            shown = _EMPTY.code_for_node(_tensor_fields(node, ctx, converted=False)[0].expression)
            self._report(node, f"the f-string field `{{{shown}}}` of a tensor (torch before 2.13)", ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx: RuleContext) -> None:
        if isinstance(node.operator, cst.Modulo) and _string_like(node.left, ctx):
            right = node.right
            values = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
            if any(ctx.kind_of(value) is Kind.TENSOR for value in values):
                self._report(node, "`%`-formatting a tensor", ctx)
        elif _formats_tensor(node.left, ctx) or _formats_tensor(node.right, ctx):
            self._report_use(node, "computing with", ctx)

    # -- a formatted string used as a string ----------------------------------------

    def visit_Comparison(self, node: cst.Comparison, ctx: RuleContext) -> None:
        if any(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
            return
        operands = comparison_operands(node)
        if any(_formats_tensor(operand, ctx) for operand in operands):
            self._report_use(node, "comparing", ctx)

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        if _formats_tensor(node.value, ctx):
            self._report_use(node, "indexing", ctx)

    def _report(self, node: cst.CSTNode, what: str, ctx: RuleContext) -> None:
        ctx.report(type(self), node, f"{what} in compiled code breaks the graph; {_REMEDY}")

    def _report_use(self, node: cst.CSTNode, verb: str, ctx: RuleContext) -> None:
        ctx.report(
            type(self),
            node,
            f"{verb} a string formatted from a tensor in compiled code breaks the graph (Dynamo "
            f"keeps it unformatted until it is used); {_REMEDY}",
        )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.last_activation = ""

            def forward(self, x):
                y = torch.relu(self.proj(x))
                self.last_activation = repr(y)
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            s = str(x)
            t = f"{x}"
            return x + len(t) * 0, s
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.last_activation = ""

            def forward(self, x):
                y = torch.relu(self.proj(x))
                if not torch.compiler.is_compiling():
                    self.last_activation = repr(y)
                return y.sum(dim=-1)
        """,
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.scales = {}

            def forward(self, x):
                key = f"{x.shape[0]}x{x.shape[1]}"
                y = self.proj(x) * self.scales.get(key, 1.0)
                return y, f"y={y}"
        """,
    )
