"""TL518 and TL519: tensor APIs and torch calls that Dynamo cannot trace."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import codes, findings
from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text

MODULE = """
import io
import torch
import torch.distributed as dist
from torch import nn
{prelude}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.config = Config()
        self.register_buffer("scratch", torch.zeros(0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        {body}
        return y
"""


def in_forward(body: str, prelude: str = "") -> str:
    return MODULE.format(body=body, prelude=prelude)


def messages(source: str) -> list[tuple[str, str]]:
    diagnostics = lint_text(textwrap.dedent(source), "/project/pkg/model.py", Settings(root=Path("/project")))
    return [(d.code, d.message) for d in diagnostics]


# -- TL518 untraceable-tensor-api -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "api"),
    [
        ("y.share_memory_()", "`.share_memory_()`"),
        ("y.resize_(4, 8)", "`.resize_()`"),
        ("self.scratch.resize_(y.shape)", "`.resize_()`"),
        ("y.resize_as_(x)", "`.resize_as_()`"),
        ("n = y.untyped_storage().nbytes()", "`.nbytes()` of a tensor's `untyped_storage()`"),
        ("s = y.untyped_storage()\n        p = s.data_ptr()", "`.data_ptr()` of a tensor's `untyped_storage()`"),
        ("flag = x.is_inference()", "`.is_inference()`"),
        ("has_history = y.grad_fn is not None", "reading `.grad_fn`"),
        ("name = type(y.grad_fn).__name__", "reading `.grad_fn`"),
        ("y.requires_grad = True", "setting `.requires_grad`"),
        ("z = y.detach()\n        z.requires_grad = x.requires_grad", "setting `.requires_grad`"),
    ],
)
def test_tl518_flags_the_tensor_api(body: str, api: str) -> None:
    ((code, message),) = messages(in_forward(body))
    assert code == "TL518"
    assert message.startswith(f"{api} in compiled code breaks the graph")


def test_tl518_messages_give_the_rewrite() -> None:
    found = dict(messages(in_forward("has_history = y.grad_fn is not None")))
    assert "test `t.requires_grad` instead of `t.grad_fn is not None`" in found["TL518"]
    found = dict(messages(in_forward("flag = x.is_inference()")))
    assert "outside the compiled function and pass a Python bool" in found["TL518"]
    found = dict(messages(in_forward("n = y.untyped_storage().nbytes()")))
    assert "`t.numel() * t.element_size()`" in found["TL518"]


def test_tl518_points_at_the_storage_method() -> None:
    source = in_forward("s = y.untyped_storage()\n        p = s.data_ptr()")
    row = textwrap.dedent(source).splitlines().index("        p = s.data_ptr()") + 1
    assert findings(source) == [("TL518", row)]


@pytest.mark.parametrize(
    "body",
    [
        "if y.requires_grad:\n            y = y * 2",  # reading requires_grad is traced
        "s = y.untyped_storage()",  # taking the storage is traced
        "n = y.untyped_storage().size()",  # and so is its size
        "n = y.numel() * y.element_size()",
        "self.config.requires_grad = True",  # not a tensor
        "self.proj.share_memory()",  # nn.Module.share_memory, no underscore
        "flag = self.is_inference()",  # a module, not a tensor
        "sizes = list(y.shape)\n        sizes.resize_(3)",  # a Python list
        "if not torch.compiler.is_compiling():\n            y.share_memory_()",  # eager only
        "y = y.requires_grad_(False)",  # a different API
    ],
)
def test_tl518_silent_for_look_alikes(body: str) -> None:
    assert codes(in_forward(body)) == []


@pytest.mark.parametrize(
    "body",
    [
        # a tensor the compiled code was given
        "x.requires_grad_()",
        "self.scratch.requires_grad_(True)",
        # made here and returned, or returned through a value computed from it
        "w = torch.ones(8).requires_grad_()\n        y = y * w",
        "w = x.clone()\n        w.requires_grad_()\n        y = y + w",
        # made here and handed to autograd, which ends the graph with it alive
        "w = x.detach().requires_grad_()\n        (g,) = torch.autograd.grad(self.proj(w).sum(), w)",
    ],
)
def test_tl518_flags_requires_grad_(body: str) -> None:
    assert "TL518" in codes(in_forward(body))


@pytest.mark.parametrize(
    "body",
    [
        # made here and used only inside the graph
        "w = x.clone().requires_grad_()\n        y = y + (w * 2).detach()",
        "x.requires_grad_(False)",
        "w = x.clone().requires_grad_(requires_grad=False)\n        y = y + w",
        "self.proj.requires_grad_(False)",
    ],
)
def test_tl518_silent_for_requires_grad_that_stays_in_the_graph(body: str) -> None:
    assert codes(in_forward(body)) == []


def test_tl518_silent_outside_compiled_code() -> None:
    source = """
    import torch

    def publish(t: torch.Tensor) -> torch.Tensor:
        t.share_memory_()
        t.requires_grad = False
        return t.grad_fn
    """
    assert codes(source) == []


# -- TL519 untraceable-torch-call -----------------------------------------------------------


@pytest.mark.parametrize(
    ("prelude", "body", "api"),
    [
        ("", "flag = torch.is_inference_mode_enabled()", "`torch.is_inference_mode_enabled()`"),
        ("from torch import is_inference_mode_enabled as in_inference",
         "flag = in_inference()", "`torch.is_inference_mode_enabled()`"),
        ("", "flag = torch.is_inference(y)", "`torch.is_inference()`"),
        ("", 'torch.save(y, "/tmp/y.pt")', "`torch.save()`"),
        ("from torch import save as dump", 'dump(y, "/tmp/y.pt")', "`torch.save()`"),
        ("", 'torch.serialization.save(y, "/tmp/y.pt")', "`torch.serialization.save()`"),
        ("", 'w = torch.load("/tmp/w.pt")', "`torch.load()`"),
        ("", "s = torch.sparse_coo_tensor(self.indices, y[0], (8,))", "`torch.sparse_coo_tensor()`"),
        ("", "buffer = io.BytesIO()", "`io.BytesIO()`"),
        ("", "with torch.backends.cudnn.flags(enabled=False):\n            y = y * 2",
         "`torch.backends.cudnn.flags()`"),
        ("from torch.backends import mkldnn", "with mkldnn.flags(enabled=False):\n            y = y * 2",
         "`torch.backends.mkldnn.flags()`"),
        ("", "with torch.backends.cuda.sdp_kernel(enable_math=True):\n            y = y * 2",
         "`torch.backends.cuda.sdp_kernel()`"),
        ("from io import StringIO", "text = StringIO()", "`io.StringIO()`"),
        ("", "work = dist.all_reduce(y, async_op=True)", "`all_reduce(..., async_op=True)`"),
        ("", "dist.all_reduce(y, dist.ReduceOp.SUM, None, True)", "`all_reduce(..., async_op=True)`"),
        ("from torch.distributed import all_gather",
         "all_gather([y, y], y, async_op=True)", "`all_gather(..., async_op=True)`"),
        ("", "dist.reduce_scatter_tensor(y, x, async_op=True)", "`reduce_scatter_tensor(..., async_op=True)`"),
        ("from torch.distributed import distributed_c10d as c10d",
         "c10d.all_to_all_single(y, x, async_op=True)", "`all_to_all_single(..., async_op=True)`"),
    ],
)
def test_tl519_flags_the_call(prelude: str, body: str, api: str) -> None:
    ((code, message),) = messages(in_forward(body, prelude))
    assert code == "TL519"
    assert message.startswith(f"{api} in compiled code breaks the graph")


def test_tl519_follows_buffers_and_work_handles() -> None:
    body = (
        "buffer = io.BytesIO()\n        torch.save(y, buffer)\n        data = buffer.getvalue()\n"
        "        work = dist.all_reduce(y, async_op=True)\n        work.wait()"
    )
    found = messages(in_forward(body))
    assert [code for code, _ in found] == ["TL519"] * 5
    assert found[2][1].startswith("`.getvalue()` of an in-memory file")
    assert found[4][1].startswith("`.wait()` on an async collective's handle")
    assert "`async_op=False`" in found[4][1]


def test_tl519_load_from_a_buffer_is_two_findings_on_one_line() -> None:
    source = in_forward('w = torch.load(io.BytesIO(b""))')
    row = textwrap.dedent(source).splitlines().index('        w = torch.load(io.BytesIO(b""))') + 1
    assert findings(source) == [("TL519", row), ("TL519", row)]


def test_tl519_rewrite_for_inference_mode() -> None:
    ((_, message),) = messages(in_forward("flag = torch.is_inference_mode_enabled()"))
    assert "`torch.is_grad_enabled()`" in message


@pytest.mark.parametrize(
    ("prelude", "body"),
    [
        ("", "dist.all_reduce(y)"),  # synchronous collectives are traced
        ("", "dist.all_reduce(y, async_op=False)"),
        ("", "work = dist.all_reduce(y)\n        event.wait()"),
        ("", "flag = torch.is_grad_enabled()"),
        ("from torch.nn.attention import SDPBackend, sdpa_kernel",
         "with sdpa_kernel([SDPBackend.MATH]):\n            y = y * 2"),
        ("", 'self.save(y, "/tmp/y.pt")'),
        ("", "save = lambda t: t\n        save(y)"),
        ("", "if not torch.compiler.is_compiling():\n            torch.save(y, io.BytesIO())"),
        ("", "buffer = make_buffer()\n        data = buffer.getvalue()"),
    ],
)
def test_tl519_silent_for_look_alikes(prelude: str, body: str) -> None:
    assert codes(in_forward(body, prelude)) == []


def test_numpy_save_is_no_torch_save() -> None:
    # It breaks all the same, as a NumPy function Dynamo cannot trace.
    assert codes(in_forward('np.save("/tmp/y.npy", y)', "import numpy as np")) == ["TL522"]


def test_tl519_silent_outside_compiled_code() -> None:
    source = """
    import io
    import torch

    def checkpoint(model, path):
        buffer = io.BytesIO()
        torch.save(model.state_dict(), buffer)
        if torch.is_inference_mode_enabled():
            return torch.load(path)
        return buffer.getvalue()
    """
    assert codes(source) == []


def test_fullgraph_compile_is_said_to_fail() -> None:
    source = """
    import torch

    @torch.compile(fullgraph=True)
    def step(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.requires_grad = True
        return y + torch.is_inference_mode_enabled()
    """
    found = messages(source)
    assert [code for code, _ in found] == ["TL518", "TL519"]
    assert all(message.endswith("under `fullgraph=True` the compile fails") for _, message in found)
