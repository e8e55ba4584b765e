"""TL2xx-TL4xx: rules that need to know which values are tensors."""

from __future__ import annotations

import pytest

from helpers import codes

MODULE = """
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.heads = 4
        self.experts = nn.ModuleList([nn.Linear(8, 8)])
        self.register_buffer("bias", torch.zeros(8))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, n: int = 2, lengths=None):
        y = self.proj(x)
        {body}
        return y
"""


def in_forward(body: str) -> str:
    return MODULE.format(body=body)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("if y.sum() > 0:\n            y = -y", "TL201"),
        ("if (y > 0).any():\n            y = -y", "TL201"),
        ("if not y.all():\n            y = -y", "TL201"),
        ("if y:\n            y = -y", "TL201"),
        ("if mask is not None and mask.any():\n            y = -y", "TL201"),
        ("while y.sum() < 10:\n            y = y * 2", "TL201"),
        ("y = y if y.mean() > 0 else -y", "TL201"),
        ("ok = (y.sum() > 0) and (y.mean() < 1)", "TL201"),
        ("if self.bias.sum() > 0:\n            y = -y", "TL201"),
        ("a, b = y.chunk(2, dim=-1)\n        if a.max() > b.max():\n            y = -y", "TL201"),
        ("s = y.sum()\n        s += 1\n        if s > 0:\n            y = -y", "TL201"),
        ("inside = 0 < y.sum() < 1", "TL201"),
        ("assert x.sum() > 0 and y.sum() > 0", "TL201"),
        ("assert y.sum() > 0 or n > 1", "TL201"),
        ("assert not y.isnan().any()", "TL201"),
        ("assert 0 < y.sum() < 1", "TL201"),
        ("if torch.equal(y, x):\n            y = -y", "TL202"),
        ("if math.isnan(y.sum()):\n            y = -y", "TL203"),
        ('assert y.sum() > 0, f"bad sum {y.sum()}"', "TL204"),
        ('torch._assert(y.sum() > 0, "bad")', "TL205"),
        ("s = y.sum().item()", "TL301"),
        ("v = y.tolist()", "TL302"),
        ("k = int(y.argmax())", "TL303"),
        ("k = float(self.proj(x).mean())", "TL303"),
        ("p = y.data_ptr() % 2", "TL304"),
        ("y = y[: y.argmax()]", "TL305"),
        ("scales = [1.0, 2.0]\n        y = y * scales[y.argmax()]", "TL305"),
        ("for i in range(y.argmax()):\n            pass", "TL305"),
        ("y = self.experts[y.argmax()](y)", "TL305"),
        ("i = torch.nonzero(y > 0)", "TL401"),
        ("i = y.nonzero()", "TL401"),
        ("(i,) = torch.where(y > 0)", "TL402"),
        ("z = y[y > 0]", "TL403"),
        ("keep = y > 0\n        z = y[keep]", "TL403"),
        ("z = x[torch.isnan(y)]", "TL403"),
        ("keep = (y > 0).to(x.device)\n        z = y[keep]", "TL403"),
        ("if lengths is not None and lengths.dtype == torch.bool:\n            z = y[lengths]", "TL403"),
        ("keep = (y > 0).unsqueeze(0).repeat(2, 1)\n        z = y[keep[0]]", "TL403"),
        ("rows = (y > 0).all(dim=-1)\n        z = y[rows]", "TL403"),
        ("z = y[torch.any(y > 0, dim=-1)]", "TL403"),
        ("u = torch.unique(y)", "TL404"),
        ("u = y.unique()", "TL404"),
        ("s = torch.masked_select(y, y > 0)", "TL405"),
        ("r = torch.repeat_interleave(y, y.argmax(dim=-1))", "TL406"),
        ("h = F.one_hot(y.argmax(dim=-1))", "TL407"),
        ("h = F.one_hot(y.argmax(dim=-1), -1)", "TL407"),
    ],
)
def test_breaking_pattern_is_reported(body: str, code: str):
    assert code in codes(in_forward(body))


@pytest.mark.parametrize(
    "body",
    [
        "if x.shape[0] > 1:\n            y = -y",
        "if self.training:\n            y = -y",
        "if mask is None:\n            y = -y",
        "if x.dtype == torch.float16:\n            y = y.float()",
        "if len(x) > 2:\n            y = -y",
        "if n > 1 and self.heads > 2:\n            y = -y",
        "if x.dim() == 2 and x.numel() > 4:\n            y = -y",
        "if x.is_cuda or x.requires_grad:\n            y = -y",
        "batch, width = x.shape\n        if batch > width:\n            y = -y",
        "if not torch.compiler.is_compiling():\n            y = -y",
        "if torch.is_tensor(mask):\n            y = -y",
        "if lengths:\n            y = -y",
        "assert y.sum() > 0",
        'assert y.sum() > 0, "constant message"',
        'assert n > 1 and y.sum() > 0, "the last test only"',
        "assert (x.sum() > 0) & (y.sum() > 0)",
        "assert 0 < n < x.shape[0]",
        'assert x.shape[-1] == 8, f"width {x.shape[-1]}"',
        "y = torch.where(y > 0, y, 0.0)",
        "y[y < 0] = 0.0",
        "y = y.masked_fill(y < 0, 0.0)",
        "r = torch.repeat_interleave(y, 2, dim=0)",
        "r = torch.repeat_interleave(y, y.argmax(dim=-1), output_size=8)",
        "h = F.one_hot(y.argmax(dim=-1), num_classes=8)",
        "y = y[:, : x.shape[1]]",
        "y = y[y.argmax(dim=-1)]",
        "w = (y > 0).to(y.dtype)\n        z = y[w.long()]",
        "if torch.xpu.is_available():\n            y = -y",
        "if torch.jit.is_scripting():\n            k = int(y.argmax())",
        "k = y.argmax() if torch.jit.is_tracing() else 0\n        y = y[:k]",
        "if lengths is not None and lengths.dtype == torch.long:\n            z = y[lengths]",
        "p = y.data_ptr()",
        "k = int(n)",
        "m = max(y.max(), x.max())",
        "v = math.sqrt(n)",
    ],
)
def test_look_alike_stays_silent(body: str):
    assert codes(in_forward(body)) == []


def test_outside_compiled_code_nothing_is_reported():
    source = """
    import torch

    def evaluate(model, batch):
        out = model(batch)
        if out.sum() > 0:
            return out.argmax().item()
        return torch.nonzero(out)
    """
    assert codes(source) == []


def test_return_kinds_flow_through_project_functions():
    source = """
    import torch

    def score(x: torch.Tensor):
        return x.softmax(dim=-1).max()

    @torch.compile
    def step(x: torch.Tensor):
        if score(x) > 0.5:
            return x * 2
        return x
    """
    assert codes(source) == ["TL201"]


def test_unannotated_parameters_need_evidence():
    silent = """
    import torch

    @torch.compile
    def step(flag, x: torch.Tensor):
        if flag:
            return x * 2
        return x
    """
    evident = """
    import torch

    @torch.compile
    def step(flag, x: torch.Tensor):
        if flag.any():
            return x * 2
        return x
    """
    assert codes(silent) == []
    assert codes(evident) == ["TL201"]


@pytest.mark.parametrize(
    ("setting", "body", "code"),
    [
        ({"capture_scalar_outputs": True}, "s = y.sum().item()", "TL301"),
        ({"capture_scalar_outputs": True}, "k = int(y.argmax())", "TL303"),
        ({"capture_dynamic_output_shape_ops": True}, "i = torch.nonzero(y > 0)", "TL401"),
        ({"capture_dynamic_output_shape_ops": True}, "z = y[y > 0]", "TL403"),
    ],
)
def test_compile_profile_silences_captured_patterns(setting: dict, body: str, code: str):
    assert code in codes(in_forward(body))
    assert code not in codes(in_forward(body), **setting)


def test_one_hot_without_num_classes_is_never_captured():
    body = "h = F.one_hot(y.argmax(dim=-1))"
    assert "TL407" in codes(in_forward(body), capture_dynamic_output_shape_ops=True)


def test_dynamo_config_assignment_in_the_file_counts():
    source = """
    import torch
    import torch._dynamo

    torch._dynamo.config.capture_scalar_outputs = True

    @torch.compile
    def step(x: torch.Tensor):
        return x * x.sum().item()
    """
    assert codes(source) == []


def test_numpy_only_reported_when_numpy_is_not_traced():
    body = "a = y.numpy()"
    assert codes(in_forward(body)) == []
    assert codes(in_forward(body), trace_numpy=False) == ["TL306"]


@pytest.mark.parametrize(
    "body",
    [
        "r = torch.arange(y.argmax())",
        "z = y.view(-1, y.argmax())",
        "z = y.narrow(-1, 0, y.argmax())",
    ],
)
def test_tensor_as_a_size_is_reported(body: str):
    assert "TL305" in codes(in_forward(body))


def test_staticmethod_first_parameter_is_not_self():
    source = """
    import torch
    from torch import nn

    class Net(nn.Module):
        @staticmethod
        def _indices(mask):
            return mask.nonzero(as_tuple=True)

        def forward(self, x: torch.Tensor):
            return self._indices(x > 0)
    """
    assert codes(source) == ["TL401"]


def test_a_dict_keyed_by_tensors_is_no_python_index():
    source = in_forward("cache = {y: 1.0}\n        y = y * cache[y]")
    assert codes(source) == []


def test_a_name_bound_to_a_tuple_elsewhere_is_a_tensor_where_narrowed():
    body = (
        "perm = y.argsort()\n"
        "        if isinstance(lengths, torch.Tensor):\n"
        "            lengths = lengths[:, perm]\n"
        "        elif isinstance(lengths, tuple):\n"
        "            lengths = (lengths[0][perm], lengths[1][perm])"
    )
    assert codes(in_forward(body)) == []
