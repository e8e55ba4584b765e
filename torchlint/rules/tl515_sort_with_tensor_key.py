from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import keyword, positional
from torchlint.rules._untraceable_values import bound, item_kind
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

_SORTED = "builtins.sorted"
_MIN_MAX = frozenset({"builtins.min", "builtins.max"})
_ITEM = "__torchlint_item__"
_REMEDY = (
    "stack the tensors and order them with `argsort` on a key tensor (`ts[keys.argsort()]`), "
    "or `max`/`min` with `argmax`/`argmin`"
)


def _key_kind(key: cst.BaseExpression, items: Kind, ctx: RuleContext) -> Kind:
    """The kind `key(item)` gives, for items of kind ``items``."""
    if isinstance(key, cst.Lambda):
        params = key.params.params
        if len(params) != 1:
            return Kind.UNKNOWN
        with bound(ctx, {params[0].name.value: items}):
            return ctx.kind_of(key.body)
    # A named key function: ask what calling it on one item gives.
    with bound(ctx, {_ITEM: items}):
        return ctx.kind_of(cst.Call(func=key, args=[cst.Arg(cst.Name(_ITEM))]))


class SortWithTensorKey(Rule):
    code = "TL515"
    name = "sort-with-tensor-key"
    message = f"sorting tensors, or by a key that gives a tensor, in compiled code breaks the graph; {_REMEDY}"
    suggestion = (
        "`stacked = torch.stack(ts); ordered = stacked[stacked.norm(dim=1).argsort(descending=True)]`; "
        "`best = stacked[stacked.sum(dim=1).argmax()]` for `max(ts, key=...)`"
    )
    # Sorting by tensor keys: GB0207. `sorted()` over a tensor itself: GB0059. `min`/`max`
    # with `key=` over tensors (whatever the key gives), or with a tensor key: GB0193.
    gb_ids = ("GB0207", "GB0059", "GB0193")
    gb_types = (
        "sort with non-constant keys",
        "Failed to trace builtin operator",
        "invalid call to builtin op handler",
    )

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        args = positional(node)
        key_arg = keyword(node, "key")
        key = key_arg.value if key_arg is not None else None
        if isinstance(key, cst.Name) and key.value == "None":
            key = None
        if name == _SORTED and len(args) == 1:
            self._sort(node, args[0].value, key, "sorted()", ctx)
        elif name is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "sort":
            receiver = node.func.value
            # `t.sort()` is the tensor method (it has no `key=`); a list's `sort` is the builtin.
            if key is not None or ctx.kind_of(receiver) is not Kind.TENSOR:
                self._sort(node, receiver, key, "list.sort()", ctx)
        elif name in _MIN_MAX and key is not None and args:
            items = args[0].value if len(args) == 1 else cst.List([cst.Element(a.value) for a in args])
            self._min_max(node, items, key, name.rsplit(".", 1)[1], ctx)

    def _sort(self, node: cst.Call, iterable: cst.BaseExpression, key, shown: str, ctx: RuleContext) -> None:
        items = item_kind(iterable, ctx)
        if key is not None:
            if _key_kind(key, items, ctx) is not Kind.TENSOR:
                return
            problem = f"`{shown}` with a key that gives a tensor"
        elif items is Kind.TENSOR:
            problem = f"`{shown}` of tensors (each tensor is its own sort key)"
        else:
            return
        ctx.report(type(self), node, f"{problem} in compiled code breaks the graph; {_REMEDY}")

    def _min_max(self, node: cst.Call, items_node: cst.BaseExpression, key, shown: str, ctx: RuleContext) -> None:
        items = item_kind(items_node, ctx)
        if items is Kind.TENSOR:
            problem = f"`{shown}(..., key=...)` over tensors"
        elif _key_kind(key, items, ctx) is Kind.TENSOR:
            problem = f"`{shown}()` with a key that gives a tensor"
        else:
            return
        ctx.report(type(self), node, f"{problem} in compiled code breaks the graph; {_REMEDY}")

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                rows = list(self.proj(x).unbind(0))
                rows = sorted(rows, key=lambda row: row.norm(), reverse=True)
                return torch.stack(rows)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            chunks = list(x.chunk(4))
            best = max(chunks, key=lambda t: t.sum())
            return best * 2
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
                rows = self.proj(x)
                order = rows.norm(dim=1).argsort(descending=True, stable=True)
                return rows[order]
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            order = sorted([3, 1, 2, 0])
            chunks = sorted(x.split([1, 3]), key=lambda t: t.shape[0])
            return x[order] + chunks[0].sum()
        """,
    )
