"""Recompile cases: lists, dicts and `*args` whose length or keys change between calls.

Dynamo guards on a container's length and keys, so each new structure is a new graph.
"""

import torch
from torch import nn

CALLS = 10


def sum_of_features(features):
    return sum(f.mean(0) for f in features)


def list_length_grows():
    """A list of 1..10 feature tensors (one more per call), as multi-scale features pile up."""
    for count in range(1, CALLS + 1):
        yield sum_of_features, ([torch.randn(4, 8) for _ in range(count)],)


LOSS_NAMES = ("mse", "l1", "huber", "kl", "cos", "smooth", "hinge", "bce", "nll", "ce")


def weighted_losses(losses):
    return sum(weight * value for weight, value in zip(range(1, len(losses) + 1), losses.values()))


def dict_keys_change():
    """A dict of named losses whose key set grows by one name per call."""
    for count in range(1, CALLS + 1):
        yield weighted_losses, ({name: torch.rand(()) for name in LOSS_NAMES[:count]},)


def concat_all(*tensors):
    return torch.cat(tensors, 0).sum(0)


def star_args_length_grows():
    """`concat_all(*chunks)` with 1..10 chunks: `*args` of changing length."""
    for count in range(1, CALLS + 1):
        yield concat_all, tuple(torch.randn(2, 8) for _ in range(count))


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({name: nn.Linear(8, 1) for name in LOSS_NAMES})

    def forward(self, x, tasks):
        return {task: self.heads[task](x) for task in tasks}


def task_list_changes():
    """Multi-task training: each batch asks for a different subset of task heads (a list of names)."""
    model = MultiHead()
    for step in range(CALLS):
        tasks = [LOSS_NAMES[(step + i) % len(LOSS_NAMES)] for i in range(1 + step % 4)]
        yield model, (torch.randn(4, 8), tasks)


def stacked_features(features):
    return features.mean(1).sum(0)


def stacked_into_one_tensor():
    """1..10 feature tensors stacked into one tensor before the call: only its size changes."""
    for count in range(1, CALLS + 1):
        yield stacked_features, (torch.stack([torch.randn(4, 8) for _ in range(count)]),)


def every_key_always_passed():
    """The loss dict always holds every key; only the values change."""
    for _ in range(CALLS):
        yield weighted_losses, ({name: torch.rand(()) for name in LOSS_NAMES},)


def fixed_length_list_growing_tensors():
    """Always three feature tensors; their row count changes every call."""
    for rows in range(2, 2 + CALLS):
        yield sum_of_features, ([torch.randn(rows, 8) for _ in range(3)],)


def torchlint_targets():
    return {
        "list_length_grows": list_length_grows(),
        "dict_keys_change": dict_keys_change(),
        "star_args_length_grows": star_args_length_grows(),
        "task_list_changes": task_list_changes(),
        "stacked_into_one_tensor": stacked_into_one_tensor(),
        "every_key_always_passed": every_key_always_passed(),
        "fixed_length_list_growing_tensors": fixed_length_list_growing_tensors(),
    }
