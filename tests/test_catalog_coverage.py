"""torchlint against every row of the torch 2.13 graph-break catalog.

One case per catalog row, named after the row's pattern: a snippet of compiled code that
reproduces the pattern, and the codes torchlint must report on it. A row that breaks
expects the rules that predict the break (TL601-TL603 too where Dynamo skips the whole
frame for a break in a loop, `try` or hand-written context manager); a row that compiles
expects no finding at all. A breaking row that no rule covers is listed in NOT_COVERED with
the reason, and its case checks that torchlint stays silent, so the list cannot go stale;
docs/coverage.md's "Not covered" section lists the same. Where the catalog blames a particular
line, the snippet marks it `# blamed` and the finding must be on it.

FULLGRAPH_CASES do the same for the catalog's fullgraph column. RULE_DEFECTS are cases a
rule is meant to get right but does not yet: strict xfails that hold the right answer.
Every snippet's break (or its absence) was measured on torch 2.13.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from torchlint.settings.config import Settings
from torchlint.project.resolve import lint_text
from torchlint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
BLAMED = "# blamed"

HEADER = """\
import collections
import contextlib
import copy
import ctypes
import dataclasses
import enum
import functools
import inspect
import io
import logging
import math
import os
import pdb
import random
import sys
import threading
import time
import warnings
import weakref

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

logger = logging.getLogger(__name__)
"""


def _block(text: str, indent: int) -> str:
    return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * indent)


def forward(body: str, *, before: str = "", init: str = "", args: str = "x: torch.Tensor") -> str:
    """``body`` as `Net.forward`; ``before`` holds module-level code, ``init`` extra `__init__` lines."""
    return (
        f"{HEADER}\n{_block(before, 0)}\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(8, 8)\n"
        f"{_block(init, 8)}\n\n"
        f"    def forward(self, {args}):\n"
        f"{_block(body, 8)}\n"
    )


def fullgraph(body: str, *, before: str = "") -> str:
    """``body`` as a function compiled only with `fullgraph=True`."""
    return (
        f"{HEADER}\n{_block(before, 0)}\n\n\n"
        "@torch.compile(fullgraph=True)\n"
        "def step(x: torch.Tensor):\n"
        f"{_block(body, 4)}\n"
    )


def module_source(text: str) -> str:
    return f"{HEADER}\n\n{_block(text, 0)}\n"


@dataclass(frozen=True)
class Row:
    pattern: str
    source: str
    codes: frozenset[str]
    breaks: bool
    settings: dict = field(default_factory=dict)


def broken(pattern: str, source: str, *codes: str, **settings) -> Row:
    """A row that breaks on 2.13; no codes: no rule covers it (see NOT_COVERED)."""
    return Row(pattern, source, frozenset(codes), True, settings)


def silent(pattern: str, source: str, **settings) -> Row:
    """A row that compiles as one graph on 2.13: torchlint must say nothing."""
    return Row(pattern, source, frozenset(), False, settings)


# Breaking rows no rule predicts, and why.
NOT_COVERED = {
    "custom_autograd_function_print": (
        "a `print` inside `torch.autograd.Function.forward`: Dynamo traces the Function's forward "
        "when `.apply` is called from compiled code, but torchlint does not follow `.apply` into it"
    ),
    "ForwardHookPrint": (
        "a `print` in a forward hook registered with `register_forward_hook`: Dynamo traces hooks "
        "with the module call, but torchlint does not follow hook registrations"
    ),
    # The fullgraph column (FULLGRAPH_CASES).
    "view_with_tensor_size (fullgraph)": (
        "under `fullgraph=True`, `x.view(2, n + 1)` with a tensor `n` fails with an internal "
        "Dynamo error (PendingUnbackedSymbolNotFound); the size-argument finding is dropped there"
    ),
}


# Rows a rule is meant to cover but gets wrong today. Each case is a strict xfail, so it
# fails once the rule is fixed and the entry must go.
RULE_DEFECTS: dict[str, str] = {}


# A break two helpers below `forward`, for the attribution rows.
THREE_HELPERS = """
def _helper_level3(t):
    n = t.sum().item()  # blamed
    return t * n


def _helper_level2(t):
    return _helper_level3(t + 1)


def _helper_level1(t):
    return _helper_level2(t * 2)
"""


CASES = [
    # -- print / logging ---------------------------------------------------------------
    broken("print_str", forward("""
        print("hello")
        return x + 1
    """), "TL101"),
    broken("print_tensor", forward("""
        y = self.proj(x)
        print(y)
        return y
    """), "TL101"),
    broken("print_fstring_tensor", forward("""
        y = self.proj(x)
        print(f"y={y}")
        return y
    """), "TL101"),
    broken("print_fstring_shape", forward("""
        y = self.proj(x)
        print(f"shape={tuple(y.shape)} dtype={y.dtype}")
        return y
    """), "TL101"),
    broken("print_first_stmt", forward("""
        print("enter")
        return self.proj(x)
    """), "TL101"),
    broken("logger_info", forward("""
        y = self.proj(x)
        logger.info("y shape %s", y.shape)
        return y
    """), "TL102"),
    broken("logger_warning", forward("""
        y = self.proj(x)
        logger.warning("careful: %d", y.shape[0])
        return y
    """), "TL102"),
    broken("logging_module_info", forward("""
        y = self.proj(x)
        logging.info("module level logging")
        return y
    """), "TL102"),
    broken("warnings_warn", forward("""
        warnings.warn("deprecated path")
        return self.proj(x)
    """), "TL103"),
    broken("sys_stdout_write", forward("""
        sys.stdout.write("progress\\n")
        return self.proj(x)
    """), "TL104"),
    # -- assertions ----------------------------------------------------------------------
    silent("assert_tensor_value", forward("""
        y = torch.tanh(self.proj(x))
        assert (y > -2).all()
        return y
    """)),
    broken("assert_tensor_value_msg", forward("""
        y = self.proj(x)
        assert y.sum() > -100, f"sum too small: {y.sum()}"
        return y
    """), "TL204"),
    silent("assert_shape", forward("""
        y = self.proj(x)
        assert y.shape[-1] == 8, "bad width"
        return y
    """)),
    silent("assert_isinstance_py", forward("""
        assert isinstance(scale, float)
        return self.proj(x) * scale
    """, args="x: torch.Tensor, scale: float = 1.0")),
    broken("torch_assert_tensor", forward("""
        y = self.proj(x)
        torch._assert(y.sum() > -100, "sum too small")
        return y
    """), "TL205"),
    silent("torch_check_shape", forward("""
        y = self.proj(x)
        torch._check(y.shape[0] == x.shape[0])
        return y
    """)),
    broken("torch_check_on_tensor", forward("""
        y = torch.tanh(self.proj(x))
        torch._check(bool((y > -2).all()))
        return y
    """), "TL303"),
    broken("raise_on_nan", forward("""
        y = self.proj(x)
        if torch.isnan(y).any():
            raise ValueError("nan in activations")
        return y
    """), "TL201"),
    # -- control flow ----------------------------------------------------------------------
    broken("if_tensor_sum", forward("""
        y = self.proj(x)
        if y.sum() > 0:
            y = y + 1
        else:
            y = y - 1
        return y
    """), "TL201"),
    broken("while_tensor", forward("""
        y = x.abs() + 0.1
        while y.sum() < 100:
            y = y * 2
        return y
    """), "TL201"),
    broken("if_any", forward("""
        y = self.proj(x)
        if (y > 0.5).any():
            y = y.clamp(max=0.5)
        return y
    """), "TL201"),
    broken("if_one_elem_tensor", forward("""
        y = x.sum()
        if y:
            return x + 1
        return x
    """), "TL201"),
    broken("bool_of_tensor", forward("""
        y = self.proj(x)
        b = bool(y.sum() > 0)
        return y * b
    """), "TL303"),
    broken("ternary_tensor", forward("""
        y = self.proj(x)
        z = y if y.mean() > 0 else -y
        return z
    """), "TL201"),
    broken("and_tensors", forward("""
        y = self.proj(x)
        ok = (y.sum() > 0) and (y.mean() < 10)
        return y * ok
    """), "TL201"),
    broken("or_tensors", forward("""
        a, b = x.chunk(2, dim=-1)
        m = (a.sum() > 0) or (b.sum() > 0)
        return a * m
    """), "TL201"),
    silent("if_shape", forward("""
        if x.shape[0] > 2:
            x = x * 2
        return self.proj(x)
    """)),
    silent("IfTraining", forward("""
        y = self.proj(x)
        if self.training:
            y = F.dropout(y, 0.1)
        return y
    """)),
    silent("if_dtype", forward("""
        if x.dtype == torch.float16:
            x = x.float()
        return self.proj(x)
    """)),
    silent("if_is_cuda", forward("""
        if x.is_cuda:
            x = x.half()
        return x * 2
    """)),
    silent("if_len", forward("""
        if len(x) > 2:
            x = x[:2]
        return self.proj(x)
    """)),
    silent("if_numel_dim", forward("""
        if x.numel() > 10 and x.dim() == 2:
            x = x * 2
        return self.proj(x)
    """)),
    silent("if_optional_none", forward("""
        y = self.proj(x)
        if mask is not None:
            y = y * mask
        return y
    """, args="x: torch.Tensor, mask: torch.Tensor | None = None")),
    broken("if_torch_equal", forward("""
        a, b = x.chunk(2, dim=-1)
        if torch.equal(a, b):
            return a
        return a - b
    """), "TL202"),
    silent("builtin_max_tensors", forward("""
        a, b = x.chunk(2, dim=-1)
        m = max(a.max(), b.max())
        return x / m
    """)),
    silent("for_range_shape", forward("""
        rows = []
        for i in range(x.shape[0]):
            rows.append(x[i] * i)
        return torch.stack(rows)
    """)),
    silent("for_over_tensor_rows", forward("""
        total = torch.zeros(8)
        for row in x:
            total = total + row
        return total
    """)),
    broken("break_in_loop", forward("""
        for i in range(2):
            print(i)
            x = x + i
        return x
    """), "TL101", "TL601"),
    broken("if_item_compare", forward("""
        y = self.proj(x)
        if y.sum().item() > 0:
            return y + 1
        return y - 1
    """), "TL301"),
    broken("early_return_tensor", forward("""
        y = self.proj(x)
        if (y < 0).any():
            return y.abs()
        return y
    """), "TL201"),
    silent("tensor_flag_not_branched", forward("""
        y = self.proj(x)
        flag = y.sum() > 0
        return y * flag
    """)),
    # -- tensor to Python scalars ----------------------------------------------------------
    broken("item_call", forward("""
        y = self.proj(x)
        s = y.sum().item()
        return y * s
    """), "TL301"),
    broken("item_multiline", forward("""
        y = self.proj(x)
        return torch.add(
            y,
            y.sum().item(),  # blamed
        )
    """), "TL301"),
    broken("tolist_int", forward("""
        counts = (x > 0).sum(dim=-1)
        vals = counts.tolist()
        return x * len(vals)
    """), "TL302"),
    broken("tolist_float", forward("""
        y = self.proj(x)
        vals = y.tolist()
        return y * len(vals)
    """), "TL302"),
    broken("tolist_loop", forward("""
        idx = x.argmax(dim=-1)
        total = 0
        for v in idx.tolist():
            total += v
        return x + total
    """), "TL302"),
    silent("numpy_method", forward("""
        a = x.numpy()
        return torch.from_numpy(a * 2)
    """)),
    silent("cpu_numpy_return", forward("""
        return self.proj(x).detach().cpu().numpy()
    """)),
    broken("int_of_tensor", forward("""
        y = self.proj(x)
        n = int(y.argmax())
        return y * n
    """), "TL303"),
    broken("float_of_tensor", forward("""
        y = self.proj(x)
        s = float(y.mean())
        return y - s
    """), "TL303"),
    broken("data_ptr_call", forward("""
        y = self.proj(x)
        p = y.data_ptr()
        return y + (p % 2) * 0
    """), "TL304"),
    broken("math_isnan_item", forward("""
        y = self.proj(x)
        if math.isnan(y.sum().item()):
            return torch.zeros_like(y)
        return y
    """), "TL301"),
    broken("slice_with_tensor", forward("""
        n = (x > 0).sum()
        return x[:n]
    """), "TL305"),
    broken("list_index_with_tensor", forward("""
        scales = [0.5, 1.0, 2.0, 4.0]
        i = x.sum(dim=-1).argmax()
        return x * scales[i]
    """), "TL305"),
    silent("torch_tensor_of_tensors", forward("""
        stats = torch.tensor([x.sum(), x.mean()])
        return x * stats[0]
    """)),
    # -- dynamic output shapes -------------------------------------------------------------
    broken("nonzero_call", forward("""
        y = self.proj(x)
        idx = torch.nonzero(y > 0)
        return idx
    """), "TL401"),
    broken("bool_mask_index", forward("""
        y = self.proj(x)
        pos = y[y > 0]
        return pos.sum()
    """), "TL403"),
    broken("unique_call", forward("""
        labels = x.argmax(dim=-1)
        u = torch.unique(labels)
        return u
    """), "TL404"),
    broken("masked_select_call", forward("""
        y = self.proj(x)
        s = torch.masked_select(y, y > 0)
        return s.sum()
    """), "TL405"),
    broken("nonzero_shape0", forward("""
        y = self.proj(x)
        n = y.nonzero().shape[0]
        return y * n
    """), "TL401"),
    broken("one_hot_no_num_classes", forward("""
        labels = x.argmax(dim=-1)
        return F.one_hot(labels).float()
    """), "TL407"),
    broken("repeat_interleave_tensor", forward("""
        r = (x > 0).sum(dim=-1)
        return torch.repeat_interleave(x, r, dim=0) * 2
    """), "TL406"),
    broken("where_one_arg", forward("""
        rows, cols = torch.where(x > 0)
        return rows + cols
    """), "TL402"),
    # -- NumPy -------------------------------------------------------------------------------
    silent("np_array_of_tensor", forward("""
        a = np.array(x)
        return torch.from_numpy(a + 1)
    """)),
    silent("np_sum_of_tensor", forward("""
        s = np.sum(x)
        return x + s
    """)),
    silent("np_ops_on_numpy_view", forward("""
        a = x.numpy()
        b = np.clip(a, -1.0, 1.0) * 2
        return torch.from_numpy(b)
    """)),
    silent("np_random", forward("""
        noise = np.random.rand(4, 8)
        return x + torch.from_numpy(noise).float()
    """)),
    # -- environment and I/O -------------------------------------------------------------------
    broken("time_time", forward("""
        self.started = time.time()
        return self.proj(x)
    """), "TL501"),
    broken("time_perf_counter", forward("""
        t0 = time.perf_counter()
        y = self.proj(x)
        self.last_ms = (time.perf_counter() - t0) * 1e3
        return y
    """), "TL501"),
    broken("random_random", forward("""
        r = random.random()
        return self.proj(x) * r
    """), "TL502"),
    silent("os_environ_get", forward("""
        y = self.proj(x)
        if os.environ.get("MODEL_DEBUG") == "1":
            y = y * 2
        return y
    """)),
    silent("os_getenv", forward("""
        scale = float(os.getenv("MODEL_SCALE", "1.0"))
        return self.proj(x) * scale
    """)),
    broken("input_call", forward("""
        s = input("scale? ")
        return self.proj(x) * float(s)
    """), "TL105"),
    broken("open_file", forward("""
        with open(os.devnull, "w") as f:
            f.write("forward\\n")
        return self.proj(x)
    """), "TL107"),
    broken("breakpoint_call", forward("""
        y = self.proj(x)
        breakpoint()
        return y
    """), "TL106"),
    broken("pdb_set_trace", forward("""
        y = self.proj(x)
        pdb.set_trace()
        return y
    """), "TL106"),
    broken("manual_seed_call", forward("""
        torch.manual_seed(0)
        return x + torch.randn(8)
    """), "TL506"),
    broken("torch_generator", forward("""
        g = torch.Generator().manual_seed(0)
        return x + torch.randn(8, generator=g)
    """), "TL507"),
    silent("cuda_is_available_guard", forward("""
        if torch.cuda.is_available():
            x = x.cuda()
        return x * 2
    """)),
    silent("cuda_synchronize", forward("""
        y = self.proj(x)
        torch.cuda.synchronize()
        return y
    """)),
    silent("dist_guarded", forward("""
        y = self.proj(x)
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(y)
        return y
    """)),
    silent("rand_ops_inplace", forward("""
        noise = torch.empty_like(x).uniform_(-0.1, 0.1)
        return x + noise + torch.rand_like(x)
    """)),
    # -- Python constructs -----------------------------------------------------------------------
    broken("deepcopy_tensor", forward("""
        y = copy.deepcopy(x)
        return y * 2
    """), "TL503"),
    broken("DeepcopyModule", forward("""
        ema = copy.deepcopy(self.proj)
        return ema(x)
    """), "TL503"),
    broken("dynamo_disable_call", forward("""
        y = self.proj(x)
        z = _dynamo_disabled_helper(y)
        return z
    """, before="""
        @torch._dynamo.disable
        def _dynamo_disabled_helper(y):
            return y * 2
    """), "TL504"),
    broken("compiler_disable_call", forward("""
        y = self.proj(x)
        z = _compiler_disabled_helper(y)
        return z
    """, before="""
        @torch.compiler.disable
        def _compiler_disabled_helper(y):
            return y * 2
    """), "TL504"),
    broken("explicit_graph_break", forward("""
        y = self.proj(x)
        torch._dynamo.graph_break()
        return y * 2
    """), "TL505"),
    broken("autograd_grad_inside", forward("""
        y = (self.proj(x) ** 2).sum()
        (g,) = torch.autograd.grad(y, self.proj.weight, create_graph=False)
        return g
    """), "TL508"),
    silent("custom_autograd_function", forward("""
        return Scale.apply(self.proj(x))
    """, before="""
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
    """)),
    broken("custom_autograd_function_print", forward("""
        return Scale.apply(self.proj(x))
    """, before="""
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                print("fwd")
                return t * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
    """)),
    broken("backward_inside", forward("""
        loss = self.proj(x).pow(2).sum()
        loss.backward()
        return loss.detach()
    """), "TL509"),
    broken("requires_grad_inside", forward("""
        w = torch.ones(8).requires_grad_()
        return x * w
    """), "TL518"),
    silent("generator_consume", forward("""
        parts = list(_scaled(x.chunk(2)))
        return torch.cat(parts)
    """, before="""
        def _scaled(chunks):
            for i, t in enumerate(chunks):
                yield t * (i + 1)
    """)),
    silent("generator_expression", forward("""
        return sum(t.sum() for t in x.chunk(4))
    """)),
    silent("try_except_no_raise", forward("""
        try:
            y = self.proj(x)
        except RuntimeError:
            y = x
        return y
    """)),
    silent("try_except_caught_raise", forward("""
        try:
            raise ValueError("fallback")
        except ValueError:
            y = x * 2
        return y
    """)),
    broken("try_with_break_inside", forward("""
        try:
            print("inside try")
            y = self.proj(x)
        except RuntimeError:
            y = x
        return y
    """), "TL101", "TL602"),
    silent("no_grad_ctx", forward("""
        with torch.no_grad():
            y = self.proj(x)
        return y
    """)),
    silent("autocast_ctx", forward("""
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.proj(x)
        return y.float()
    """)),
    silent("custom_ctx_manager", forward("""
        with Scope():
            y = self.proj(x)
        return y
    """, before="""
        class Scope:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False
    """)),
    silent("contextmanager_decorator", forward("""
        with scope():
            y = self.proj(x)
        return y
    """, before="""
        @contextlib.contextmanager
        def scope():
            yield
    """)),
    broken("no_grad_with_break_inside", forward("""
        with torch.no_grad():
            print("in no_grad")
            y = self.proj(x)
        return y
    """), "TL101"),
    broken("custom_ctx_with_break_inside", forward("""
        with Scope():
            print("in ctx")
            y = self.proj(x)
        return y
    """, before="""
        class Scope:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False
    """), "TL101", "TL603"),
    broken("threading_lock_ctx", forward("""
        lock = threading.Lock()
        with lock:
            y = self.proj(x)
        return y
    """), "TL513"),
    silent("SuperForward", module_source("""
        class Base(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.proj = nn.Linear(8, 8)

            def forward(self, x: torch.Tensor):
                return self.proj(x)


        class Net(Base):
            def forward(self, x: torch.Tensor):
                return super().forward(x) * 2
    """)),
    silent("ModuleListIter", forward("""
        for layer in self.layers:
            x = layer(x)
        return x
    """, init="self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])")),
    silent("dict_comprehension", forward("""
        stats = {name: t.mean() for name, t in zip(("a", "b"), x.chunk(2))}
        return x - stats["a"]
    """)),
    broken("list_comp_with_item", forward("""
        vals = [r.sum().item() for r in x]
        return x * len(vals)
    """), "TL301"),
    silent("mutate_input_list", forward("""
        y = self.proj(x)
        history.append(y.detach())
        return y
    """, args="x: torch.Tensor, history: list")),
    silent("global_list_append", forward("""
        _SEEN.append(x.shape[0])
        return self.proj(x)
    """, before="_SEEN = []")),
    silent("global_counter", forward("""
        global _CALLS
        _CALLS += 1
        return self.proj(x)
    """, before="_CALLS = 0")),
    silent("SelfCounter", forward("""
        self.calls += 1
        return self.proj(x)
    """, init="self.calls = 0")),
    silent("id_call", forward("""
        self.last_input = id(x)
        return self.proj(x)
    """)),
    broken("hash_tensor", forward("""
        d = {x: 1.0}
        return x * (hash(x) % 1 + 2) * d[x]
    """), "TL517"),
    silent("isinstance_checks", forward("""
        if isinstance(x, torch.Tensor) and not isinstance(x, nn.Parameter):
            x = x * 2
        return self.proj(x)
    """)),
    broken("str_tensor", forward("""
        y = self.proj(x)
        s = str(y)
        return y
    """), "TL516"),
    broken("repr_tensor", forward("""
        y = self.proj(x)
        s = repr(y)
        return y
    """), "TL516"),
    broken("fstring_tensor_no_print", forward("""
        y = self.proj(x)
        s = f"{y}"
        return y + len(s) * 0
    """), "TL516"),
    silent("fstring_shape_key", forward("""
        key = f"{x.shape[0]}x{x.shape[1]}"
        scale = self.scales.get(key, 1.0)
        return self.proj(x) * scale
    """, init="self.scales = {}")),
    silent("len_set_of_shapes", forward("""
        n = len({t.shape for t in x.chunk(2)})
        return self.proj(x) * n
    """)),
    broken("sorted_tensors_key", forward("""
        ts = list(x.chunk(4))
        ordered = sorted(ts, key=lambda t: t.sum())
        return torch.cat(ordered)
    """), "TL515"),
    silent("sorted_python_ints", forward("""
        order = sorted([3, 1, 2, 0])
        return x[order]
    """)),
    silent("jit_is_scripting", forward("""
        if torch.jit.is_scripting():
            return x
        return self.proj(x)
    """)),
    silent("math_on_python_numbers", forward("""
        scale = math.sqrt(x.shape[-1])
        return self.proj(x) / scale
    """)),
    broken("ctypes_call", forward("""
        c = _libm.cos(0.0)
        return self.proj(x) * c
    """, before="""
        _libm = ctypes.CDLL("libm.so.6")
        _libm.cos.restype = ctypes.c_double
        _libm.cos.argtypes = [ctypes.c_double]
    """), "TL512"),
    silent("recursion", forward("""
        return _depth_sum(x, 3)
    """, before="""
        def _depth_sum(t, depth):
            if depth == 0:
                return t
            return _depth_sum(t * 0.5, depth - 1) + t
    """)),
    silent("closure", forward("""
        scale = 2.0

        def apply(t):
            return t * scale

        return apply(self.proj(x))
    """)),
    silent("functools_partial", forward("""
        act = functools.partial(F.leaky_relu, negative_slope=0.1)
        return act(self.proj(x))
    """)),
    silent("inspect_signature", forward("""
        n = len(inspect.signature(self.proj.forward).parameters)
        return self.proj(x) * n
    """)),
    silent("lru_cache_helper", forward("""
        return self.proj(x) * _scale_for(x.shape[-1])
    """, before="""
        @functools.lru_cache(maxsize=None)
        def _scale_for(width):
            return 1.0 / math.sqrt(width)
    """)),
    broken("class_def_in_fn", forward("""
        class Local:
            scale = 2.0

        return self.proj(x) * Local.scale
    """), "TL514"),
    silent("namedtuple_in_fn", forward("""
        Pair = collections.namedtuple("Pair", ["a", "b"])
        p = Pair(*x.chunk(2))
        return p.a + p.b
    """)),
    silent("namedtuple_dataclass_use", forward("""
        cfg = Config()
        out = Output(self.proj(x) * cfg.scale, x.mean())
        return out.logits + out.aux
    """, before="""
        Output = collections.namedtuple("Output", ["logits", "aux"])


        @dataclasses.dataclass
        class Config:
            scale: float = 2.0
    """)),
    silent("getattr_dynamic_name", forward("""
        name = "proj"
        layer = getattr(self, name)
        return layer(x)
    """)),
    silent("tensor_attr_set", forward("""
        y = self.proj(x)
        y.tag = "projected"
        return y
    """)),
    broken("param_in_forward", forward("""
        w = nn.Parameter(torch.ones(8))
        return self.proj(x) * w
    """), "TL510"),
    broken("lstm_module_call", forward("""
        return self.rnn(x)[0]
    """, init="self.rnn = nn.LSTM(8, 8)"), "TL511"),
    silent("is_compiling_branch", forward("""
        if not torch.compiler.is_compiling():
            print("eager path")
        return self.proj(x)
    """)),
    silent("sum_list_of_tensors", forward("""
        return sum([x, x * 2, self.proj(x)])
    """)),
    broken("nested_helper_break", forward("""
        return _print_helper(self.proj(x))
    """, before="""
        def _print_helper(t):
            print("in helper")  # blamed
            return t * 2
    """), "TL101"),
    silent("use_deterministic", forward("""
        torch.use_deterministic_algorithms(True)
        return self.proj(x)
    """)),
    silent("set_grad_enabled_fn", forward("""
        torch.set_grad_enabled(False)
        y = self.proj(x)
        torch.set_grad_enabled(True)
        return y
    """)),
    # -- hooks ---------------------------------------------------------------------------------
    silent("ForwardHook", forward("""
        return self.proj(x)
    """, before="""
        def _scale_hook(module, args, output):
            return output * 2
    """, init="self.proj.register_forward_hook(_scale_hook)")),
    broken("ForwardHookPrint", forward("""
        return self.proj(x)
    """, before="""
        def _print_hook(module, args, out):
            print("hook fired", out.shape)
    """, init="self.proj.register_forward_hook(_print_hook)")),
    # -- third-party -----------------------------------------------------------------------------
    silent("einops_rearrange", forward("""
        return rearrange(x, "b (h d) -> b h d", h=2)
    """, before="from einops import rearrange")),
    silent("einops_reduce_repeat", forward("""
        pooled = reduce(x, "b d -> d", "mean")
        return repeat(pooled, "d -> b d", b=2)
    """, before="from einops import reduce, repeat")),
    # -- attribution -------------------------------------------------------------------------------
    broken("if_multiline_cond", forward("""
        y = self.proj(x)
        if (
            x.shape[0] > 1
            and y.sum() > 0  # blamed
        ):
            y = y * 2
        return y
    """), "TL201"),
    silent("assert_multiline", forward("""
        y = torch.tanh(self.proj(x))
        assert (
            y.abs().max() < 1e6
        ), "activation overflow"
        return y
    """)),
    broken("print_multiline", forward("""
        y = self.proj(x)
        print(  # blamed
            "v",
            y.shape,
        )
        return y
    """), "TL101"),
    broken("if_helper_predicate", forward("""
        y = self.proj(x)
        if _is_pos(y):  # blamed
            y = y * 2
        return y
    """, before="""
        def _is_pos(t):
            return t.sum() > 0
    """), "TL201"),
    broken("if_helper_bool", forward("""
        y = self.proj(x)
        if _is_pos_bool(y):
            y = y * 2
        return y
    """, before="""
        def _is_pos_bool(t):
            return bool(t.sum() > 0)  # blamed
    """), "TL303"),
    broken("return_ternary", forward("""
        y = self.proj(x)
        return y if y.sum() > 0 else -y  # blamed
    """), "TL201"),
    broken("for_with_data_dependent_break", forward("""
        for _ in range(3):
            if x.sum() > 5:  # blamed
                break
            x = x * 2
        return x
    """), "TL201", "TL601"),
    broken("SubmoduleBreak", module_source("""
        class Child(nn.Module):
            def forward(self, x: torch.Tensor):
                print("child")  # blamed
                return x * 2


        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.proj = nn.Linear(8, 8)
                self.child = Child()

            def forward(self, x: torch.Tensor):
                return self.child(self.proj(x)) + 1
    """), "TL101"),
    broken("deep_nested_break", forward("""
        return _helper_level1(self.proj(x))
    """, before=THREE_HELPERS), "TL301"),
    broken("two_breaks", forward("""
        print("a")  # blamed
        y = self.proj(x)
        n = y.sum().item()  # blamed
        return y * n
    """), "TL101", "TL301"),
    # -- the registry sweep --------------------------------------------------------------------
    silent("mask_assign", forward("""
        y = self.proj(x)
        y[y < 0] = 0
        return y
    """)),
    broken("arange_from_tensor", forward("""
        n = (x > 0).sum()
        return torch.arange(n)
    """), "TL305"),
    broken("zeros_from_item_shape", forward("""
        n = int(x.abs().sum().long())
        return torch.zeros(n)
    """), "TL303"),
    broken("is_inference_call", forward("""
        if x.is_inference():
            return x
        return self.proj(x)
    """), "TL518"),
    broken("inference_mode_enabled", forward("""
        if torch.is_inference_mode_enabled():
            return x
        return self.proj(x)
    """), "TL519"),
    broken("share_memory_call", forward("""
        y = self.proj(x).detach()
        y.share_memory_()
        return y
    """), "TL518"),
    broken("resize_call", forward("""
        y = x.clone()
        y.resize_(4)
        return y
    """), "TL518"),
    broken("grad_fn_access", forward("""
        y = self.proj(x)
        if y.grad_fn is not None:
            y = y * 2
        return y
    """), "TL518"),
    silent("register_tensor_hook", forward("""
        y = self.proj(x)
        if y.requires_grad:
            y.register_hook(lambda g: g * 0.5)
        return y
    """)),
    broken("untyped_storage_call", forward("""
        y = self.proj(x)
        n = y.untyped_storage().nbytes()
        return y * n
    """), "TL518"),
    silent("record_function_ctx", forward("""
        with torch.profiler.record_function("proj"):
            y = self.proj(x)
        return y
    """)),
    silent("functools_wraps_in_fn", forward("""
        def doubled(fn):
            @functools.wraps(fn)
            def inner(t):
                return fn(t) * 2

            return inner

        return doubled(self.proj)(x)
    """)),
    silent("jit_script_call", forward("""
        return _gelu_ish(self.proj(x))
    """, before="""
        @torch.jit.script
        def _gelu_ish(t: torch.Tensor) -> torch.Tensor:
            return t * torch.sigmoid(1.702 * t)
    """)),
    broken("numpy_trace_off", forward("""
        a = x.numpy()
        return torch.from_numpy(a * 2)
    """), "TL306", trace_numpy=False),
    silent("deterministic_warn_only", forward("""
        torch.use_deterministic_algorithms(True, warn_only=True)
        return self.proj(x)
    """)),
    silent("iter_next_python", forward("""
        it = iter([1.0, 2.0])
        return self.proj(x) * next(it)
    """)),
    broken("topk_k_from_tensor", forward("""
        k = (x > 0).sum(dim=-1).min()
        return torch.topk(x, int(k)).values.sum()
    """), "TL303"),
    broken("view_with_tensor_size", forward("""
        flat = x.reshape(-1)[:8]
        n = (flat > 0).sum() * 0 + 3
        return flat.view(2, n + 1)
    """), "TL305"),
    silent("type_name_checks", forward("""
        if type(x).__name__ == "Tensor" and x.dtype.is_floating_point:
            x = x * 2
        return self.proj(x)
    """)),
    silent("masked_fill_and_where", forward("""
        y = x.masked_fill(x < 0, 0.0)
        return torch.where(y > 1, y, 1.0)
    """)),
    broken("setattr_tensor_requires_grad", forward("""
        y = x * 2
        y.requires_grad = True
        return y
    """), "TL518"),
    silent("dict_keys_tensor", forward("""
        cache = {x: x * 2}
        return cache[x]
    """)),
    silent("string_ops", forward("""
        name = "layer_" + str(3)
        name = name.upper().replace("_", "-")
        return self.proj(x) * len(name)
    """)),
    broken("torch_save_buffer", forward("""
        buf = io.BytesIO()
        torch.save(x, buf)
        return x * 2
    """), "TL519"),
    silent("dist_all_reduce", forward("""
        y = self.proj(x)
        dist.all_reduce(y)
        return y
    """)),
    broken("dist_all_reduce_async", forward("""
        y = self.proj(x)
        work = dist.all_reduce(y, async_op=True)
        work.wait()
        return y
    """), "TL519"),
    silent("ParametrizedLinear", forward("""
        return self.lin(x)
    """, init="self.lin = nn.utils.parametrizations.weight_norm(nn.Linear(8, 8))")),
    silent("BatchNormTrain", forward("""
        return self.norm(self.proj(x))
    """, init="self.norm = nn.BatchNorm1d(8)")),
    silent("MultiheadAttn", forward("""
        q = x.unsqueeze(0)
        out, _ = self.attn(q, q, q)
        return out
    """, init="self.attn = nn.MultiheadAttention(8, 2, batch_first=True)")),
    silent("TransformerEncoderLayer", forward("""
        return self.layer(x.unsqueeze(0))
    """, init="self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)")),
    silent("enum_and_weakref", forward("""
        ref = weakref.ref(self.proj)
        scale = 2.0 if self.mode is Mode.TRAIN else 1.0
        return ref()(x) * scale
    """, before="""
        class Mode(enum.Enum):
            TRAIN = 1
            EVAL = 2
    """, init="self.mode = Mode.TRAIN")),
    silent("checkpoint_call", forward("""
        return torch.utils.checkpoint.checkpoint(self.proj, x, use_reentrant=False)
    """)),
    silent("checkpoint_reentrant", forward("""
        return torch.utils.checkpoint.checkpoint(self.proj, x, use_reentrant=True)
    """)),
    silent("fstring_tensor_returned", forward("""
        y = self.proj(x)
        return y, f"y={y}"
    """)),
    broken("data_ptr_compare", forward("""
        a, b = x, x.view(4, 8)
        if a.data_ptr() == b.data_ptr():
            return a * 2
        return a + b
    """), "TL304"),
    silent("data_ptr_unused", forward("""
        y = self.proj(x)
        p = y.data_ptr()
        return y
    """)),
    broken("if_item_compare_captured", forward("""
        y = self.proj(x)
        if y.sum().item() > 0:
            return y + 1
        return y - 1
    """), "TL201", capture_scalar_outputs=True),
    broken("nonzero_captured_then_branch", forward("""
        y = self.proj(x)
        idx = torch.nonzero(y > 0)
        if idx.shape[0] > 2:
            return y * 2
        return y
    """), "TL201", capture_dynamic_output_shape_ops=True),
    silent("modulo_on_shape", forward("""
        pad = (4 - x.shape[-1] % 4) % 4
        return F.pad(x, (0, pad))
    """)),
    silent("assert_tensor_const_msg", forward("""
        y = torch.tanh(self.proj(x))
        assert (y > -2).all(), "activations out of range"
        return y
    """)),
    broken("assert_tensor_fstring_shape_msg", forward("""
        y = self.proj(x)
        assert y.sum() > -100, f"bad sum for shape {tuple(y.shape)}"
        return y
    """), "TL204"),
    broken("deep_nested_break_nested_cfg", forward("""
        return _helper_level1(self.proj(x))
    """, before="torch._dynamo.config.nested_graph_breaks = True\n" + THREE_HELPERS), "TL301"),
    broken("torch_generator_global", forward("""
        return x + torch.randn(8, generator=_GLOBAL_GEN)
    """, before="_GLOBAL_GEN = torch.Generator().manual_seed(0)"), "TL507"),
]


# The catalog's fullgraph column: `fullgraph=True` turns on capture_scalar_outputs and
# capture_dynamic_output_shape_ops, so many breaks of a default compile trace there; what
# still fails (a captured value reaching Python control flow, a float `.tolist()`, ...) must
# still be reported. `broken` here means the fullgraph compile fails.
FULLGRAPH_CASES = [
    silent("torch_check_on_tensor", fullgraph("""
        torch._check(bool((torch.tanh(x) > -2).all()))
        return x * 2
    """)),
    silent("bool_of_tensor", fullgraph("""
        b = bool(x.sum() > 0)
        return x * b
    """)),
    silent("item_call", fullgraph("""
        s = x.sum().item()
        return x * s
    """)),
    silent("item_multiline", fullgraph("""
        return torch.add(
            x,
            x.sum().item(),
        )
    """)),
    silent("tolist_int", fullgraph("""
        vals = (x > 0).sum(dim=-1).tolist()
        return x * len(vals)
    """)),
    silent("tolist_loop", fullgraph("""
        total = 0
        for v in x.argmax(dim=-1).tolist():
            total += v
        return x + total
    """)),
    silent("int_of_tensor", fullgraph("""
        n = int(x.argmax())
        return x * n
    """)),
    silent("float_of_tensor", fullgraph("""
        s = float(x.mean())
        return x - s
    """)),
    silent("slice_with_tensor", fullgraph("""
        n = (x > 0).sum()
        return x[:n]
    """)),
    broken("list_index_with_tensor", fullgraph("""
        scales = [0.5, 1.0, 2.0, 4.0]
        i = x.sum(dim=-1).argmax()
        return x * scales[i]
    """), "TL305"),
    silent("nonzero_call", fullgraph("""
        return torch.nonzero(x > 0)
    """)),
    silent("bool_mask_index", fullgraph("""
        return x[x > 0].sum()
    """)),
    silent("unique_call", fullgraph("""
        return torch.unique(x.argmax(dim=-1))
    """)),
    silent("masked_select_call", fullgraph("""
        return torch.masked_select(x, x > 0).sum()
    """)),
    silent("nonzero_shape0", fullgraph("""
        n = x.nonzero().shape[0]
        return x * n
    """)),
    silent("repeat_interleave_tensor", fullgraph("""
        r = (x > 0).sum(dim=-1)
        return torch.repeat_interleave(x, r, dim=0) * 2
    """)),
    silent("where_one_arg", fullgraph("""
        rows, cols = torch.where(x > 0)
        return rows + cols
    """)),
    silent("list_comp_with_item", fullgraph("""
        vals = [r.sum().item() for r in x]
        return x * len(vals)
    """)),
    silent("deep_nested_break", fullgraph("""
        return _helper_level1(x)
    """, before="""
        def _helper_level3(t):
            n = t.sum().item()
            return t * n


        def _helper_level2(t):
            return _helper_level3(t + 1)


        def _helper_level1(t):
            return _helper_level2(t * 2)
    """)),
    silent("arange_from_tensor", fullgraph("""
        n = (x > 0).sum()
        return torch.arange(n)
    """)),
    silent("zeros_from_item_shape", fullgraph("""
        n = int(x.abs().sum().long())
        return torch.zeros(n)
    """)),
    silent("topk_k_from_tensor", fullgraph("""
        k = (x > 0).sum(dim=-1).min()
        return torch.topk(x, int(k)).values.sum()
    """)),
    broken("print_str", fullgraph("""
        print("hello")
        return x + 1
    """), "TL101"),
    broken("if_tensor_sum", fullgraph("""
        if x.sum() > 0:
            return x + 1
        return x - 1
    """), "TL201"),
    broken("tolist_float", fullgraph("""
        vals = x.tolist()
        return x * len(vals)
    """), "TL302"),
    broken("one_hot_no_num_classes", fullgraph("""
        return F.one_hot(x.argmax(dim=-1)).float()
    """), "TL407"),
    broken("torch_assert_tensor", fullgraph("""
        torch._assert(x.sum() > -100, "sum too small")
        return x
    """), "TL205"),
    broken("if_item_compare", fullgraph("""
        if x.sum().item() > 0:
            return x + 1
        return x - 1
    """), "TL201"),
    broken("math_isnan_item", fullgraph("""
        if math.isnan(x.sum().item()):
            return torch.zeros_like(x)
        return x
    """), "TL201"),
    broken("if_helper_bool", fullgraph("""
        if _is_pos_bool(x):
            return x * 2
        return x
    """, before="""
        def _is_pos_bool(t):
            return bool(t.sum() > 0)
    """), "TL201"),
    broken("nonzero_captured_then_branch", fullgraph("""
        idx = torch.nonzero(x > 0)
        if idx.shape[0] > 2:
            return x * 2
        return x
    """), "TL201"),
    broken("view_with_tensor_size", fullgraph("""
        flat = x.reshape(-1)[:8]
        n = (flat > 0).sum() * 0 + 3
        return flat.view(2, n + 1)
    """)),
]


def _lint(row: Row) -> list:
    """The findings about graph breaks: the catalog is of breaks (recompile hazards, TL7xx, are
    measured by bench/bench_recompiles.py)."""
    project = Path("/project")
    settings = Settings(root=project, **row.settings)
    return [d for d in lint_text(row.source, str(project / "pkg" / "model.py"), settings) if not d.code.startswith("TL7")]


def _blamed_rows(source: str) -> set[int]:
    return {number for number, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(BLAMED)}


def _key(row: Row, rows: list[Row]) -> str:
    """The name NOT_COVERED and RULE_DEFECTS use: the pattern, marked when it is the fullgraph case."""
    return f"{row.pattern} (fullgraph)" if rows is FULLGRAPH_CASES else row.pattern


def _params(rows: list[Row]) -> list:
    params = []
    for row in rows:
        defect = RULE_DEFECTS.get(_key(row, rows))
        marks = [pytest.mark.xfail(strict=True, reason=defect)] if defect else []
        params.append(pytest.param(row, id=row.pattern, marks=marks))
    return params


@pytest.mark.parametrize("rows", [CASES, FULLGRAPH_CASES], ids=["default", "fullgraph"])
def test_one_case_per_pattern(rows: list[Row]):
    patterns = [row.pattern for row in rows]
    assert len(patterns) == len(set(patterns))


def test_not_covered_names_the_breaking_rows_without_a_rule():
    uncovered = {
        _key(row, rows) for rows in (CASES, FULLGRAPH_CASES) for row in rows if row.breaks and not row.codes
    }
    assert uncovered == set(NOT_COVERED)


def _check(row: Row) -> None:
    waiting = sorted(row.codes - {rule.code for rule in all_rules()})
    if waiting:
        pytest.fail(f"{row.pattern}: waiting for {', '.join(waiting)} (no such rule yet)")
    diagnostics = _lint(row)
    found = {d.code for d in diagnostics}
    assert found == row.codes, "\n".join(f"{d.location.row}: {d.code} {d.message}" for d in diagnostics)
    blamed = _blamed_rows(row.source)
    if blamed:
        # The frame-skip findings sit on the loop, `try` or `with`; the break itself on its line.
        rows = {d.location.row for d in diagnostics if not d.code.startswith("TL6")}
        assert rows == blamed


@pytest.mark.parametrize("row", _params(CASES))
def test_catalog_row(row: Row):
    _check(row)


@pytest.mark.parametrize("row", _params(FULLGRAPH_CASES))
def test_catalog_row_under_fullgraph(row: Row):
    _check(row)


_TENSOR_ANNOTATION = re.compile(r"\b(\w+): (?:torch\.)?Tensor\b(?: \| None)?")


def _unannotated(source: str) -> str:
    """``source`` with the `torch.Tensor` annotations of its parameters taken out."""
    return "\n".join(
        _TENSOR_ANNOTATION.sub(r"\1", line) if line.lstrip().startswith("def ") else line
        for line in source.splitlines()
    ) + "\n"


_ANNOTATED = [
    pytest.param(row, id=_key(row, rows))
    for rows in (CASES, FULLGRAPH_CASES)
    for row in rows
    if _unannotated(row.source) != row.source and _key(row, rows) not in RULE_DEFECTS
]


@pytest.mark.parametrize("row", _ANNOTATED)
def test_each_row_is_found_as_well_without_its_annotations(row: Row):
    """Real model code is mostly unannotated: the kinds must come from how values are used."""
    plain = Row(row.pattern, _unannotated(row.source), row.codes, row.breaks, row.settings)
    assert [(d.location.row, d.code) for d in _lint(plain)] == [(d.location.row, d.code) for d in _lint(row)]


def _page_section(text: str, title: str) -> str:
    match = re.search(rf"^{re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"docs/coverage.md has no `{title}` section"
    return match.group(1)


def test_docs_list_what_is_not_covered():
    section = _page_section((ROOT / "docs" / "coverage.md").read_text(encoding="utf-8"), "## Not covered")
    listed = dict(re.findall(r"^- `([^`]+)`: (.+)$", section, re.MULTILINE))
    assert listed == NOT_COVERED
