from __future__ import annotations

import libcst as cst

from torchlint.rules._tensor_methods import keyword, positional
from torchlint.rules.base import Rule
from torchlint.rules.context import RuleContext

_INFERENCE_REWRITE = "decide it outside the compiled function and pass a Python bool"
_SERIALIZE_REWRITE = "save or load outside the compiled function: pass tensors in and return them out"
_BUFFER_REWRITE = "create and read the buffer outside the compiled function"
_FLAGS_REWRITE = "set the flags around the call of the compiled function"
# qualified name -> (what goes wrong, the rewrite)
_CALLS = {
    "torch.is_inference_mode_enabled": (
        "Dynamo does not trace the inference-mode check",
        "test `torch.is_grad_enabled()` (off under `inference_mode` too), or " + _INFERENCE_REWRITE,
    ),
    "torch.is_inference": ("Dynamo does not trace the inference-tensor check", _INFERENCE_REWRITE),
    "torch.save": ("Dynamo skips serialization", _SERIALIZE_REWRITE),
    "torch.serialization.save": ("Dynamo skips serialization", _SERIALIZE_REWRITE),
    "torch.load": ("Dynamo skips serialization", _SERIALIZE_REWRITE),
    "torch.serialization.load": ("Dynamo skips serialization", _SERIALIZE_REWRITE),
    "torch.sparse_coo_tensor": (
        "Dynamo skips building a sparse tensor",
        "build it outside the compiled function and pass it in, or keep the data dense",
    ),
    "torch.backends.cudnn.flags": ("Dynamo cannot enter a backend-flags context manager", _FLAGS_REWRITE),
    "torch.backends.mkldnn.flags": ("Dynamo cannot enter a backend-flags context manager", _FLAGS_REWRITE),
    "torch.backends.opt_einsum.flags": ("Dynamo skips the backend-flags context manager", _FLAGS_REWRITE),
    "torch.backends.cuda.sdp_kernel": (
        "Dynamo cannot enter the deprecated attention-backend context manager",
        "use `torch.nn.attention.sdpa_kernel(...)`, which Dynamo traces, or " + _FLAGS_REWRITE,
    ),
    "io.BytesIO": ("Dynamo cannot trace in-memory files", _BUFFER_REWRITE),
    "io.StringIO": ("Dynamo cannot trace in-memory files", _BUFFER_REWRITE),
}
# The collectives Dynamo traces (as functional collectives) unless `async_op=True`, with
# the position of `async_op` among their parameters.
_COLLECTIVES = {
    "all_reduce": 3,
    "all_gather": 3,
    "all_gather_into_tensor": 3,
    "_all_gather_base": 3,
    "reduce_scatter_tensor": 4,
    "_reduce_scatter_base": 4,
    "all_to_all_single": 5,
}
_BUFFERS = frozenset({"io.BytesIO", "io.StringIO"})
_DISTRIBUTED = ("torch.distributed.distributed_c10d.", "torch.distributed.")
_ASYNC_REWRITE = (
    "use `async_op=False`, which Dynamo traces as a functional collective, or the functional "
    "collectives of `torch.distributed._functional_collectives`"
)


def _collective(node: cst.Call, ctx: RuleContext) -> str | None:
    """The collective's short name when ``node`` calls one with `async_op=True`."""
    name = ctx.qualified_name(node.func) or ""
    short = next((name[len(prefix):] for prefix in _DISTRIBUTED if name.startswith(prefix)), None)
    if short not in _COLLECTIVES:
        return None
    arg = keyword(node, "async_op")
    if arg is None:
        args = positional(node)
        arg = args[_COLLECTIVES[short]] if len(args) > _COLLECTIVES[short] else None
    value = arg.value if arg is not None else None
    return short if isinstance(value, cst.Name) and value.value == "True" else None


class UntraceableTorchCall(Rule):
    code = "TL519"
    name = "untraceable-torch-call"
    message = (
        "a call Dynamo cannot trace (`torch.is_inference_mode_enabled()`, `torch.save`/`torch.load`, "
        "`io.BytesIO()`, a collective with `async_op=True`) breaks the graph; do it outside the "
        "compiled function"
    )
    suggestion = "do it before or after the compiled function and pass the result in"
    gb_ids = ("GB0046", "GB0208", "GB0007", "GB0156", "GB0172")
    gb_types = (
        "Encountered torch.is_inference_mode_enabled during tracing",
        "torch.* op returned non-Tensor",
        "Attempted to call function marked as skipped",
        "Unsupported method call",
        "async_op=True for distributed collectives",
    )

    def _report(self, node: cst.CSTNode, ctx: RuleContext, api: str, why: str, rewrite: str) -> None:
        message = f"{api} in compiled code breaks the graph ({why}); {rewrite}"
        ctx.report(type(self), node, message=message, suggestion=rewrite)

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        name = ctx.qualified_name(node.func)
        if name in _CALLS:
            self._report(node, ctx, f"`{name}()`", *_CALLS[name])
            return
        collective = _collective(node, ctx)
        if collective is not None:
            why = "Dynamo traces only synchronous collectives"
            self._report(node, ctx, f"`{collective}(..., async_op=True)`", why, _ASYNC_REWRITE)
            return
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        bound = ctx.assigned_value(func.value)
        if not isinstance(bound, cst.Call):
            return
        # `buffer = io.BytesIO()` then `buffer.getvalue()`: each method call breaks again.
        if ctx.qualified_name(bound.func) in _BUFFERS:
            self._report(node, ctx, f"`.{func.attr.value}()` of an in-memory file", *_CALLS["io.BytesIO"])
        # `work = dist.all_reduce(t, async_op=True)` then `work.wait()`: so does the handle.
        elif func.attr.value == "wait" and _collective(bound, ctx) is not None:
            why = "Dynamo cannot trace the work handle"
            self._report(node, ctx, "`.wait()` on an async collective's handle", why, _ASYNC_REWRITE)

    invalid = (
        """
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = torch.relu(self.proj(x))
                if not torch.is_inference_mode_enabled():
                    self.last_activation = y
                return y.sum(dim=-1)
        """,
        """
        import io

        import torch


        @torch.compile
        def step(x: torch.Tensor):
            buffer = io.BytesIO()
            torch.save(x, buffer)
            return x * 2
        """,
        """
        import torch
        import torch.distributed as dist


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            work = dist.all_reduce(y, async_op=True)
            work.wait()
            return y
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
                y = torch.relu(self.proj(x))
                if torch.is_grad_enabled():
                    self.last_activation = y
                return y.sum(dim=-1)
        """,
        """
        import torch
        import torch.distributed as dist


        @torch.compile
        def step(x: torch.Tensor):
            y = x * 2
            dist.all_reduce(y)
            return y
        """,
    )
