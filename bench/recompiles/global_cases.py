"""Recompile cases: module globals that a training loop rebinds between calls to compiled code.

An int global is guarded by value (one graph per value); a float global is not.
"""

import torch

CALLS = 10

STEP = 0
STATE = {"epoch": 0, "lr": 0.1}
LR = 0.1
NUM_CLASSES = 10




def scaled_by_step(x):
    return torch.sigmoid(x) * (1.0 + STEP)


def int_global_rebound():
    """`global STEP; STEP = step` in the loop; the compiled function reads STEP."""
    global STEP
    for step in range(CALLS):
        STEP = step
        yield scaled_by_step, (torch.randn(4, 8),)
    STEP = 0


def decayed_by_epoch(x):
    return x * (0.5 ** STATE["epoch"])


def int_in_global_dict_rebound():
    """`STATE["epoch"] = epoch`: an int item of a global dict, read in compiled code."""
    for epoch in range(CALLS):
        STATE["epoch"] = epoch
        yield decayed_by_epoch, (torch.randn(4, 8),)
    STATE["epoch"] = 0


def scaled_by_lr(x):
    return x - LR * torch.tanh(x)


def float_global_rebound():
    """`LR = 0.1 * 0.9 ** step`: a float global, a symbol after its first change."""
    global LR
    for step in range(CALLS):
        LR = 0.1 * 0.9 ** step
        yield scaled_by_lr, (torch.randn(4, 8),)
    LR = 0.1


def scaled_by_dict_lr(x):
    return x - STATE["lr"] * torch.tanh(x)


def float_in_global_dict_rebound():
    """`STATE["lr"] = lr`: a float item of a global dict changes every call."""
    for step in range(CALLS):
        STATE["lr"] = 0.1 * 0.9 ** step
        yield scaled_by_dict_lr, (torch.randn(4, 8),)
    STATE["lr"] = 0.1


def one_hot_classes(labels):
    return torch.nn.functional.one_hot(labels, NUM_CLASSES).float().mean(0)


def int_global_never_rebound():
    """Only the labels change; the int global NUM_CLASSES is read and never rebound."""
    for _ in range(CALLS):
        yield one_hot_classes, (torch.randint(0, NUM_CLASSES, (16,)),)


def torchlint_targets():
    return {
        "int_global_rebound": int_global_rebound(),
        "int_in_global_dict_rebound": int_in_global_dict_rebound(),
        "float_global_rebound": float_global_rebound(),
        "float_in_global_dict_rebound": float_in_global_dict_rebound(),
        "int_global_never_rebound": int_global_never_rebound(),
    }
