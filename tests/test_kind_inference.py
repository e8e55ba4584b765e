"""The semantic model on patterns from real model code: guards held in names, short
circuits, backends that look like tensors, masks, and attributes set outside `__init__`."""

from __future__ import annotations

import pytest

from helpers import codes, findings


def test_a_guard_held_in_a_name_rules_out_what_it_short_circuits():
    source = """
import torch
from transformers.utils import is_torchdynamo_compiling

@torch.compile
def make_mask(mask: torch.Tensor):
    is_tracing = torch.jit.is_tracing() or is_torchdynamo_compiling()
    if not is_tracing and torch.all(mask == 1):
        return None
    skip = not is_tracing and mask.all()
    if mask.any() and not is_tracing:
        return mask
    return mask
"""
    # Only `mask.any()` runs while compiling: it comes before the guard.
    assert findings(source) == [("TL201", 11)]


def test_an_or_with_a_guard_first_never_evaluates_the_rest():
    source = """
import torch

@torch.compile
def f(x: torch.Tensor):
    if torch.compiler.is_compiling() or x.sum() > 0:
        x = x + 1
    return x
"""
    assert codes(source) == []


def test_an_object_whose_shape_is_called_is_no_tensor():
    source = """
import torch

def apply(backend, tensor, shape):
    tensor = backend.reshape(tensor, shape)
    sizes = backend.shape(tensor)
    return backend.reshape(tensor, sizes)

compiled = torch.compile(apply)
"""
    assert codes(source) == []


def test_a_slice_of_a_mask_is_a_mask():
    source = """
import torch
from torch import nn

class Router(nn.Module):
    def forward(self, x):
        return x.softmax(-1), x

class Sparse(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = Router()

    def forward(self, hidden: torch.Tensor):
        mask, probs = self.router(hidden)
        mask = mask.bool()
        out = torch.zeros_like(hidden)
        out[mask[:, 0]] = hidden[mask[:, 0]] * 2
        return out
"""
    # The write keeps the shape; the read does not.
    assert findings(source) == [("TL403", 18)]


def test_attributes_set_outside_init_keep_their_kind():
    source = """
import numpy as np
import torch

class Scheduler:
    def __init__(self, n):
        self.alphas_cumprod = torch.cumprod(torch.linspace(0.1, 0.9, n), dim=0)
        self.timesteps = torch.from_numpy(np.arange(n))
        self.steps = 2 * 3

    def set_timesteps(self, steps, device=None):
        self.timesteps = torch.from_numpy(np.arange(steps)).to(device)

    def to(self, device):
        self.alphas_cumprod = self.alphas_cumprod.to(device=device)

    def step(self, timestep):
        index = (self.timesteps == timestep).nonzero(as_tuple=True)[0][0]
        if self.steps > 3:
            index = index + 1
        if index == self.timesteps.shape[0] - 1:
            return self.alphas_cumprod[0]
        return self.alphas_cumprod[1]
"""
    assert findings(source, entry_points=("Scheduler.step",)) == [("TL401", 18), ("TL201", 21)]


def test_a_parameter_annotated_with_a_module_class_is_a_module():
    source = """
import copy
import torch
from torch import nn

class Net(nn.Module):
    def forward(self, x):
        return x

@torch.compile
def distill(student: Net, teacher: nn.Module, x: torch.Tensor):
    frozen = copy.deepcopy(student)
    other = copy.deepcopy(teacher)
    return frozen(x) + other(x)
"""
    assert codes(source) == ["TL503", "TL503"]


def test_deepcopy_of_a_value_of_unknown_kind_is_silent():
    source = """
import copy
import torch

@torch.compile
def generate(x: torch.Tensor, generation_config):
    config = copy.deepcopy(generation_config)
    return x * config.scale
"""
    assert codes(source) == []


def test_a_name_assigned_from_itself_is_no_guard_and_no_crash():
    source = """
import torch

@torch.compile
def f(x: torch.Tensor, done):
    done = done or torch.compiler.is_compiling()
    done = not done
    done = done or done
    if done and x.sum() > 0:
        x = x + 1
    return x
"""
    assert codes(source) == ["TL201"]


def test_only_the_first_value_a_module_returns_is_taken_for_a_tensor():
    source = """
import torch
from torch import nn

class Embed(nn.Module):
    def forward(self, x):
        return x, x.shape[1], x.shape[2]

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Embed()

    def forward(self, x: torch.Tensor):
        hidden, height, width = self.embed(x)
        hidden = hidden.reshape(x.shape[0], height, width, -1)
        if hidden.sum() > 0:
            hidden = -hidden
        return hidden
"""
    assert findings(source) == [("TL201", 17)]


def test_each_branch_of_an_if_starts_from_the_kinds_before_it():
    source = """
import torch

@torch.compile
def f(x: torch.Tensor, flag: bool):
    n = x.sum()
    if flag:
        n = 3
    else:
        if n > 0:
            x = x + 1
    return x
"""
    # The `else` sees the tensor `n`, not the int the `if` body bound.
    assert findings(source) == [("TL201", 10)]


def test_a_value_that_is_a_tensor_on_one_branch_may_be_one_after_the_if():
    source = """
import torch
from torch import nn

class Scheduler(nn.Module):
    def __init__(self):
        super().__init__()
        self.timesteps = torch.arange(10)

    def previous(self, t, custom):
        if custom:
            index = (self.timesteps == t).long().argmax()
            prev = self.timesteps[index + 1]
        else:
            prev = t - 1
        return prev

    def forward(self, x, t, custom: bool):
        prev = self.previous(t, custom)
        scale = 2.0 if prev >= 0 else 1.0
        return x * scale
"""
    # `index` is the 0-d result of a full `argmax()`: indexing with it breaks too.
    assert findings(source) == [("TL305", 13), ("TL201", 20)]


def test_a_branch_that_returns_does_not_reach_past_the_if():
    source = """
import torch

@torch.compile
def f(x: torch.Tensor, steps):
    n = 4
    if steps is None:
        n = x.sum()
        return x * n
    if n > 2:
        x = x + 1
    return x
"""
    assert codes(source) == []


def test_a_parameter_takes_the_kind_that_every_call_in_the_file_passes():
    source = """
import torch
from torch import nn

class GlobalAttention(nn.Module):
    def _global_indices(self, is_global):
        counts = is_global.long().sum(dim=1)
        return counts.max(), is_global.nonzero(as_tuple=True)

    def _only_global(self, probs, max_num, positions):
        # a tensor that enters as it came is a fine size; arithmetic on it is computed in the graph
        head = probs.narrow(-1, 0, max_num)
        tail = probs.narrow(-1, max_num, probs.size(-1) - max_num)
        return head.sum() + tail.sum()

    def forward(self, probs: torch.Tensor, mask: torch.Tensor):
        max_num, positions = self._global_indices(mask > 0)
        return self._only_global(probs, max_num, positions)
"""
    assert findings(source) == [("TL401", 8), ("TL305", 13)]


def test_a_parameter_some_calls_pass_a_python_value_and_none_a_tensor_stays_silent():
    source = """
import torch
from torch import nn

class Block(nn.Module):
    def _scale(self, x, factor):
        if factor > 1:
            x = x * factor
        return x

    def forward(self, x: torch.Tensor):
        x = self._scale(x, 2)
        return self._scale(x, factor=x.shape[0])
"""
    assert codes(source) == []


def test_a_helper_called_with_a_tensor_by_keyword_gets_a_tensor():
    source = """
import torch

def clamp_steps(steps, limit):
    if steps > limit:
        steps = limit
    return steps

@torch.compile
def f(x: torch.Tensor):
    return x * clamp_steps(limit=4, steps=x.sum())
"""
    assert findings(source) == [("TL201", 5)]


def test_captured_numbers_are_fine_as_sizes_and_in_arithmetic_but_not_in_branches():
    source = """
import torch
from torch import nn

class Net(nn.Module):
    def forward(self, x):
        n = x.sum().item()
        idx = torch.nonzero(x > 0)
        y = x.new_zeros(int(n)) + n * 2
        z = x.new_zeros(idx.shape[0])
        if x.shape[0] > 2:
            y = y - 1
        if idx.size(0) > 2:
            y = y + 1
        return y, z

compiled = torch.compile(Net(), fullgraph=True)
"""
    assert findings(source) == [("TL201", 13)]


_HELPER_CALLED_TWICE = """
import torch

def helper(v):
    if v:
        return v + 1
    return 0

def trace(x: torch.Tensor):
{tensor_call}
    return helper(3)

compiled = torch.compile(trace)
"""


def test_a_call_a_guard_rules_out_passes_no_kind_to_the_parameters():
    guarded = "    if not torch.compiler.is_compiling():\n        helper(x.sum())"
    # Only `helper(3)` runs while compiling: `v` is a Python int there.
    assert findings(_HELPER_CALLED_TWICE.format(tensor_call=guarded)) == []
    unguarded = "    helper(x.sum())"
    assert findings(_HELPER_CALLED_TWICE.format(tensor_call=unguarded)) == [("TL201", 5)]


def test_a_configured_guard_rules_out_calls_for_the_kinds_too():
    source = "from mylib import tracing" + _HELPER_CALLED_TWICE.format(
        tensor_call="    if not tracing():\n        helper(x.sum())"
    )
    assert findings(source) == [("TL201", 5)]
    assert findings(source, guard_functions=("mylib.tracing",)) == []


_COUNT_THEN_BRANCH = """
import torch

def count(x: torch.Tensor):
{body}

@torch.compile
def f(x: torch.Tensor):
    n = count(x)
    if n:
        return x
    return -x
"""


@pytest.mark.parametrize(
    "body",
    [
        "    if not torch.compiler.is_compiling():\n        return x.sum()\n    return 1",
        "    if torch.compiler.is_compiling():\n        return 1\n    return x.sum()",
        "    if torch.compiler.is_compiling():\n        n = 1\n    else:\n        n = x.sum()\n    return n",
        "    return x.sum() if not torch.compiler.is_compiling() else 1",
        "    return torch.compiler.is_compiling() or x.sum()",
    ],
    ids=["ruled-out-branch", "after-an-exiting-branch", "ruled-out-else", "conditional-expression", "short-circuit"],
)
def test_a_tensor_returned_only_where_a_guard_rules_out_is_no_tensor_return(body: str):
    assert findings(_COUNT_THEN_BRANCH.format(body=body)) == []


def test_a_tensor_returned_beside_a_guarded_number_is_still_a_tensor_return():
    body = "    if torch.compiler.is_compiling():\n        return x.sum()\n    return 1"
    source = _COUNT_THEN_BRANCH.format(body=body)
    assert findings(source) == [("TL201", 12)]


def test_an_answer_the_call_depth_cut_short_is_worked_out_again_from_less_deep():
    # `l4` is first reached at the depth limit through `l1`, where `leaf` is too deep to follow;
    # asked again straight from `forward`, it returns the tensor `leaf` makes.
    source = """
import torch


def leaf(x: torch.Tensor):
    return x * 2


def l4(x):
    return leaf(x)


def l3(x):
    return l4(x)


def l2(x):
    return l3(x)


def l1(x):
    return l2(x)


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        a = l1(x)
        b = l4(x)
        if b.sum() > 0:
            return a
        return b
"""
    assert findings(source) == [("TL201", 29)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # what comes back from code of another file, then a method only tensors and arrays have
        ("if load(x).unsqueeze(0).sum() > 0:", [("TL201", 9)]),
        ("if load(x).view(-1).any():", [("TL201", 9)]),
        ("if x[load(x).bool()].numel():", [("TL403", 9)]),
        ("if x[load(x).detach() > 0].numel():", [("TL403", 9)]),
        ("if int(load(x).long().max()) > 1:", [("TL303", 9)]),
        ("if load(x).dot(x) <= 0:", [("TL201", 9)]),
        # names other objects share say nothing: a distribution's `expand`, a module's `to`
        ("if load(x).expand([2]).sample() > 0:", []),
        ("if load(x).to('cpu').training:", []),
        ("if load(x).sum() > 0:", []),
    ],
)
def test_a_method_only_arrays_have_makes_its_result_a_tensor(line: str, expected: list) -> None:
    source = f"""
import torch
from elsewhere import load


class Net(torch.nn.Module):
    def forward(self, x):
        y = x
        {line}
            y = x + 1
        return y
"""
    assert findings(source) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # the input of a torch function that takes only a tensor there
        ("y = torch.sigmoid(t)\n    if t > 0:\n        pass", ["TL201"]),
        ("y = torch.nn.functional.softmax(t, dim=-1)\n    k = int(t)", ["TL303"]),
        # a method called on a comparison: a Python bool has none
        ("n = (t > 0).sum()\n    if n > 1:\n        pass", ["TL201"]),
        # an assertion that it is one
        ("assert isinstance(t, torch.Tensor)\n    if t > 0:\n        pass", ["TL201"]),
        ("assert torch.is_tensor(t)\n    if t > 0:\n        pass", ["TL201"]),
        # through a scaled copy: a number times a number has no `.abs()`
        ("u = t * 2\n    v = u.abs()\n    if t > 0:\n        pass", ["TL201"]),
        ("u = -t / 255.0\n    v = u.unsqueeze(0)\n    if t > 0:\n        pass", ["TL201"]),
        # none of these says anything
        ("if t > 0:\n        pass", []),
        # a copy combined with another value, or bound twice, says nothing of `t`
        ("u = t * w\n    v = u.abs()\n    if t > 0:\n        pass", []),
        ("u = t * 2\n    u = torch.ones(3)\n    v = u.abs()\n    if t > 0:\n        pass", []),
        ("u = t * 2\n    u, w = torch.ones(3), 1\n    v = u.abs()\n    if t > 0:\n        pass", []),
        ("assert isinstance(t, int)\n    if t > 0:\n        pass", []),
        ("if (t > 0) is True:\n        pass", []),
    ],
)
def test_how_a_parameter_is_used_says_it_is_a_tensor(body: str, expected: list) -> None:
    source = f"""
import torch

@torch.compile
def step(t):
    {body}
    return t
"""
    assert codes(source) == expected


@pytest.mark.parametrize(
    ("signature", "body", "expected"),
    [
        ("self, x", "y = copy.deepcopy(x)", ["TL503"]),
        ("self, x, scale", "y = copy.deepcopy(scale)", []),  # only the first input
        ("self, x=None", "y = copy.deepcopy(x)", []),
        # used as a size: `forward(self, i, j)` of a positional bias takes lengths
        ("self, i, j", "if i > 2:\n            pass\n        r = torch.arange(j - i, j)", []),
        ("self, n", "if n > 2:\n            pass\n        return self.bias[:n]", []),
        ("self, n", "if n <= self.bias.shape[-1]:\n            pass", []),
    ],
)
def test_the_first_input_of_a_modules_forward_is_a_tensor(signature: str, body: str, expected: list) -> None:
    source = f"""
import copy
import torch

class Net(torch.nn.Module):
    def forward({signature}):
        {body}
        return None
"""
    assert codes(source) == expected


def test_inside_an_isinstance_test_for_a_number_the_value_is_plain_python():
    # pyro's `is_identically_zero(x)`: `x == 0` only runs where `x` is a number.
    source = """
import numbers
import torch

def is_zero(x):
    if isinstance(x, numbers.Number):
        return x == 0
    return False

@torch.compile
def scale(tensor: torch.Tensor, plain: bool):
    if is_zero(tensor):
        return tensor
    if plain and isinstance(tensor, (int, float)):
        if tensor > 0:
            return tensor
    return tensor * 2
"""
    assert codes(source) == []


def test_an_isinstance_test_for_a_tensor_makes_a_tensor_and_leaves_the_name_after_the_if():
    source = """
import torch

@torch.compile
def f(x, y: torch.Tensor):
    if isinstance(x, torch.Tensor):
        if x > 0:
            x = x + 1
    if isinstance(y, float):
        y = y * 2
    if y.any():
        return y
    return x
"""
    # The tensor test makes `x` a tensor inside; `y` narrowed to a float in a branch that
    # does not rebind it is still the tensor it was, after the `if`.
    assert findings(source) == [("TL201", 7), ("TL201", 11)]
