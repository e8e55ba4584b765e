"""Recompile cases: strings and object ids that change between calls to compiled code.

Strings are constants to Dynamo; `id(x)` of an input that dies after the call never matches again.
"""

import torch
from torch import nn

CALLS = 10


def tagged_norm(x, tag):
    scale = 2.0 if tag.endswith("7") else 1.0
    return torch.nn.functional.layer_norm(x, x.shape[-1:]) * scale


def string_argument_differs_every_call():
    """`tag=f"step{step}"`: a string argument that is new on every call."""
    for step in range(CALLS):
        yield tagged_norm, (torch.randn(4, 8), f"step{step}")


CACHE = {}


def cached_by_id(x):
    key = id(x)
    if key not in CACHE:
        CACHE[key] = x.sum()
    return x * 2 + CACHE[key]


def id_of_input_in_compiled_code():
    """A fresh input each call, looked up by `id(x)` in compiled code."""
    CACHE.clear()
    for _ in range(CALLS):
        yield cached_by_id, (torch.randn(4, 8),)
    CACHE.clear()


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))

    def forward(self, x, route):
        return self.experts[hash(route) % 4](x) if route else x


def route_name_per_batch():
    """Each batch carries its own dataset name, `route=f"shard-{step}"`, passed into forward."""
    model = Router()
    for step in range(CALLS):
        yield model, (torch.randn(4, 8), f"shard-{step}")


def mode_string(x, mode):
    if mode == "train":
        return torch.dropout(x, 0.1, True)
    return x * 0.9


def two_string_modes():
    """`mode` alternates between "train" and "eval": two strings, two graphs."""
    for step in range(CALLS):
        yield mode_string, (torch.randn(4, 8), "train" if step % 2 == 0 else "eval")


def reduced(x, reduction):
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    return x


def three_string_modes():
    """`reduction` cycles through "mean", "sum", "none": three strings, three graphs."""
    modes = ("mean", "sum", "none")
    for step in range(CALLS):
        yield reduced, (torch.randn(4, 8), modes[step % 3])


def torchlint_targets():
    return {
        "string_argument_differs_every_call": string_argument_differs_every_call(),
        "id_of_input_in_compiled_code": id_of_input_in_compiled_code(),
        "route_name_per_batch": route_name_per_batch(),
        "two_string_modes": two_string_modes(),
        "three_string_modes": three_string_modes(),
    }
