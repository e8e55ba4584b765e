from __future__ import annotations

import libcst as cst

from torchlint.rules._outliving import outlives_the_graph
from torchlint.rules._tensor_methods import keyword, positional, tensor_method
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext
from torchlint.analysis.kind_vocabulary import Kind

# method -> (what goes wrong, the rewrite)
_METHODS = {
    "share_memory_": (
        "Dynamo cannot move a tensor to shared memory while tracing",
        "call `t.share_memory_()` once before compiling (in `__init__` or the caller)",
    ),
    "resize_": (
        "Dynamo does not trace in-place resizing",
        "allocate the tensor with its final shape (`t.new_empty(shape)`), or use `reshape`/`view`",
    ),
    "resize_as_": (
        "Dynamo does not trace in-place resizing",
        "allocate the tensor with its final shape (`torch.empty_like(other)`)",
    ),
    "is_inference": (
        "Dynamo does not trace the inference-tensor check",
        "decide `t.is_inference()` outside the compiled function and pass a Python bool",
    ),
}
_STORAGE = "untyped_storage"
# A storage's size is traced; its other methods are not.
_TRACED_STORAGE_METHODS = frozenset({"size"})
_NOT_TENSORS = (Kind.PYTHON, Kind.SIZE, Kind.META, Kind.MODULE)
_REQUIRES_GRAD = frozenset({"requires_grad_"})
_COMPUTED = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript)


def _turns_grad_off(node: cst.Call) -> bool:
    """`t.requires_grad_(False)`: a no-op on the tensors compiled code usually gets."""
    arg = keyword(node, "requires_grad") or next(iter(positional(node)), None)
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False"


def _computed_here(receiver: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A tensor the compiled function makes (`x.clone()`, `y = x * 2`), not one it was given."""
    value = ctx.assigned_value(receiver) if isinstance(receiver, cst.Name) else receiver
    return isinstance(value, _COMPUTED) and not isinstance(receiver, cst.Subscript)


def _stored_as(node: cst.Call, ctx: RuleContext) -> str | None:
    """The name that holds the tensor after ``node``: the assignment's target, or the receiver."""
    parents = ctx.parents()
    parent = parents.get(id(node)) if parents is not None else None
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    receiver = node.func.value
    return receiver.value if isinstance(receiver, cst.Name) else None


def _requires_grad_breaks(node: cst.Call, ctx: RuleContext) -> bool:
    """`t.requires_grad_()` breaks on a tensor compiled code was given; on one it made, only when
    the tensor outlives the graph (returned, or handed to autograd)."""
    if _turns_grad_off(node):
        return False
    if not _computed_here(node.func.value, ctx):
        return True
    parents = ctx.parents()
    if parents is not None and isinstance(parents.get(id(node)), (cst.Return, cst.Yield)):
        return True
    name = _stored_as(node, ctx)
    return name is not None and outlives_the_graph(name, ctx)


def _is_storage(node: cst.BaseExpression | None, ctx: RuleContext) -> bool:
    return isinstance(node, cst.Call) and tensor_method(node, frozenset({_STORAGE}), ctx) is not None


class UntraceableTensorApi(Rule):
    code = "TL518"
    name = "untraceable-tensor-api"
    message = (
        "a tensor API Dynamo cannot trace (`grad_fn`, setting `requires_grad`, `requires_grad_()`, "
        "`share_memory_()`, "
        "`resize_()`, storage methods, `is_inference()`) breaks the graph; do it outside the "
        "compiled function"
    )
    suggestion = "do it before calling the compiled function and pass the result in"
    # `grad_fn` skips the whole frame; the others are ordinary breaks.
    # `resize_()` of a registered buffer is refused as a delayed function call (GB0148).
    gb_ids = ("GB0104", "GB0206", "GB0117", "GB0126", "GB0127", "GB0156", "GB0045", "GB0148", "GB0125", "GB8985")
    gb_types = (
        "Tensor with grad_fn()",
        "setattr() on Tensor.requires_grad",
        "Unhandled args for method",
        "Unsupported Tensor.resize_() call",
        "Unsupported Tensor.resize_as_() call",
        "Unsupported method call",
        "Encountered tensor.is_inference() during tracing",
        "Unsupported function call (delayed)",
        "Unsupported Tensor.requires_grad_() call",
        "requires_grad_() intermediate leaked as output",
    )

    def _report(self, node: cst.CSTNode, ctx: RuleContext, api: str, why: str, rewrite: str) -> None:
        message = f"{api} in compiled code breaks the graph ({why}); {rewrite}"
        ctx.report(type(self), node, message=message, suggestion=rewrite)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        method = tensor_method(node, frozenset(_METHODS), ctx)
        if method is not None:
            self._report(node, ctx, f"`.{method}()`", *_METHODS[method])
            return
        if tensor_method(node, _REQUIRES_GRAD, ctx) is not None and _requires_grad_breaks(node, ctx):
            self._report(
                node,
                ctx,
                "`.requires_grad_()`",
                "Dynamo cannot change `requires_grad` of a tensor it was given, nor return one it "
                "made require grad",
                "call `requires_grad_()` before the compiled function, or take the gradient "
                "outside it",
            )
            return
        func = node.func
        # `t.untyped_storage()` itself traces; calling a method of the storage does not.
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value not in _TRACED_STORAGE_METHODS
            and (_is_storage(func.value, ctx) or _is_storage(ctx.assigned_value(func.value), ctx))
        ):
            self._report(
                node,
                ctx,
                f"`.{func.attr.value}()` of a tensor's `untyped_storage()`",
                "Dynamo does not trace storages",
                "use `t.numel() * t.element_size()` for the size in bytes, or inspect storages "
                "outside the compiled function",
            )

    def visit_Attribute(self, node: cst.Attribute, ctx: RuleContext) -> None:
        if node.attr.value != "grad_fn" or ctx.kind_of(node.value) in _NOT_TENSORS:
            return
        self._report(
            node,
            ctx,
            "reading `.grad_fn`",
            "Dynamo skips the whole function when the tensor has one",
            "test `t.requires_grad` instead of `t.grad_fn is not None`",
        )

    def visit_Assign(self, node: cst.Assign, ctx: RuleContext) -> None:
        for target in node.targets:
            attribute = target.target
            if (
                isinstance(attribute, cst.Attribute)
                and attribute.attr.value == "requires_grad"
                and ctx.is_tensor(attribute.value)
            ):
                self._report(
                    attribute,
                    ctx,
                    "setting `.requires_grad`",
                    "Dynamo does not trace setattr on Tensor.requires_grad",
                    "set it on the tensor before calling the compiled function, or `.detach()` it "
                    "to stop gradients",
                )

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                if y.grad_fn is not None:
                    y = y - 0.1 * y.detach().mean(dim=0)
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            y.requires_grad = True
            return y
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            y = x.clone()
            y.share_memory_()
            return y
        """,
        """
        import torch


        @torch.compile
        def perturb(x: torch.Tensor):
            noise = torch.randn(8).requires_grad_()
            return x + noise, noise
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
                y = self.proj(x)
                if y.requires_grad:
                    y = y - 0.1 * y.detach().mean(dim=0)
                return y.sum(dim=-1)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            nbytes = x.numel() * x.element_size()
            return x.detach() * nbytes
        """,
        """
        import torch


        @torch.compile
        def scaled(x: torch.Tensor):
            y = x.clone().requires_grad_()
            return (y * 2).detach()
        """,
    )
