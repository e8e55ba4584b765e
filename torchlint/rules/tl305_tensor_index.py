from __future__ import annotations

import libcst as cst

from torchlint.report.diagnostic import Applicability
from torchlint.rules._tensor_methods import positional, tensor_method, torch_function
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.rules.value_fixes import list_as_tensor, one_element_index
from torchlint.analysis.kind_vocabulary import Kind

# Functions and methods whose positional arguments are sizes, which Python must know.
_SIZE_FUNCTIONS = frozenset({"arange", "zeros", "ones", "empty", "rand", "randn", "randint", "full"})
_SIZE_METHODS = frozenset({"view", "reshape", "expand", "new_zeros", "new_ones", "new_empty", "narrow"})


def _python_container(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    if isinstance(node, (cst.List, cst.Tuple)):
        return True
    value = ctx.assigned_value(node)
    return isinstance(value, (cst.List, cst.Tuple, cst.ListComp))


def _dict(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A dict keyed by tensors looks them up by identity, which Dynamo traces."""
    return isinstance(node, (cst.Dict, cst.DictComp)) or isinstance(ctx.assigned_value(node), (cst.Dict, cst.DictComp))


def _passed_in(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A parameter used as it came: a 0-d tensor that enters the graph as an input is a fine
    size (Dynamo reads it while tracing); one the graph computes is not."""
    if not isinstance(node, cst.Name) or ctx.function is None or node.value in ctx.scope.assignments:
        return False
    return ctx.function.parameter(node.value) is not None


# A 0-d integer tensor indexes as a Python int: Dynamo reads its value (`.item()`).
_ZERO_DIM_MESSAGE = (
    "a 0-d tensor computed in the graph, used as a tensor's index, is read back as a Python int "
    "and breaks the graph"
)
_ZERO_DIM_SUGGESTION = (
    "index with a 1-element tensor and drop the dim: `x[i.reshape(1)].squeeze(0)` or "
    "`x.index_select(0, i.reshape(1)).squeeze(0)`"
)


class TensorAsPythonIndex(Rule):
    code = "TL305"
    name = "tensor-as-python-index"
    message = (
        "a tensor used where Python needs an int (a slice bound, a list or ModuleList index, `range()`) "
        "breaks the graph"
    )
    suggestion = (
        "pass the bound in as a Python int, mask instead of slicing (`torch.arange(len) < n`), or index a "
        "tensor (`torch.tensor(values)[i]`) rather than a list"
    )
    fixes = (Applicability.SAFE, Applicability.UNSAFE)
    # `range(t)` fails as a builtin call (GB0059).
    # torch 2.11 reports a list indexed with a tensor as GB0070.
    gb_ids = ("GB0124", "GB0033", "GB0059", "GB0070")
    gb_types = (
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        "Data dependent operator",
        "Failed to trace builtin operator",
        "Indexing list with non-scalar tensor",
    )

    def visit_Subscript(self, node: cst.Subscript, ctx: RuleContext) -> None:
        container_is_list = None
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                # A captured scalar is a fine slice bound; a list index still needs a real int.
                if ctx.scalars_captured:
                    continue
                bounds = [b for b in (index.lower, index.upper, index.step) if b is not None]
                if any(ctx.is_tensor(bound) for bound in bounds):
                    ctx.report(type(self), node)
                    return
            elif isinstance(index, cst.Index) and ctx.is_tensor(index.value):
                if container_is_list is None:
                    # Lists, tuples and `nn.ModuleList`s need a Python int; tensors take tensor indices.
                    # A name some other line binds to a tuple is a tensor where the kinds say so
                    # (`if isinstance(x, Tensor): x = x[:, perm]`).
                    kind = ctx.kind_of(node.value)
                    container_is_list = not _dict(node.value, ctx) and kind is not Kind.TENSOR and (
                        kind in (Kind.PYTHON, Kind.MODULE) or _python_container(node.value, ctx)
                    )
                if container_is_list:
                    ctx.report(type(self), node, fix=list_as_tensor(node, ctx))
                    return
            if isinstance(index, cst.Index) and ctx.is_zero_dim(index.value) and ctx.is_tensor(node.value):
                ctx.report(type(self), node, _ZERO_DIM_MESSAGE, _ZERO_DIM_SUGGESTION, fix=one_element_index(node, ctx))
                return

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualified_name(node.func) == "builtins.range":
            # `range()` of a tensor breaks even with captured scalars.
            sizes = positional(node)
        elif ctx.scalars_captured:
            return  # captured scalars are fine sizes
        elif torch_function(node, _SIZE_FUNCTIONS, ctx):
            # `torch.full(size, fill_value)`: only the size is a size.
            sizes = positional(node)[:1] if ctx.qualified_name(node.func) == "torch.full" else positional(node)
        elif tensor_method(node, _SIZE_METHODS, ctx) and ctx.is_tensor(node.func.value):
            sizes = positional(node)
        else:
            return
        if any(ctx.is_tensor(arg.value) and not _passed_in(arg.value, ctx) for arg in sizes):
            ctx.report(type(self), node)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.temperatures = [0.5, 1.0, 2.0]

            def forward(self, x: torch.Tensor):
                level = x.abs().mean().round().long().clamp(0, 2)
                return self.proj(x) / self.temperatures[level]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            n = (x > 0).sum()
            return x[:n]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            n = (x > 0).sum()
            return torch.arange(n)
        """,
    )

    valid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)
                self.register_buffer("temperatures", torch.tensor([0.5, 1.0, 2.0]))

            def forward(self, x: torch.Tensor):
                level = x.abs().mean().round().long().clamp(0, 2)
                return self.proj(x) / self.temperatures[level.view(1)]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor, y: torch.Tensor):
            cache = {x: x * 2}
            return cache[x] + y[:, : x.shape[1]]
        """,
    )
