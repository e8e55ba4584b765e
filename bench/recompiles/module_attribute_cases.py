"""Recompile cases: attributes of an nn.Module that change between calls to compiled code.

An int attribute is specialized (one graph per value); a float or bool attribute is not.
"""

import torch
from torch import nn

CALLS = 10


class StepCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.step = 0

    def forward(self, x):
        self.step += 1
        return self.linear(x) * (1.0 / self.step)


def step_counter_in_forward():
    """`self.step += 1` in forward: the int attribute changes on every call."""
    model = StepCounter()
    for _ in range(CALLS):
        yield model, (torch.randn(4, 8),)


class EpochScaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.epoch = 0

    def forward(self, x):
        return self.linear(x) * (0.9 ** self.epoch)


def epoch_set_from_outside():
    """`model.epoch = epoch` before each call: an int attribute set by the training loop."""
    model = EpochScaled()
    for epoch in range(CALLS):
        model.epoch = epoch
        yield model, (torch.randn(4, 8),)


class Warmup(nn.Module):
    def __init__(self, warmup=20):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.warmup = warmup
        self.steps_done = 0

    def forward(self, x):
        ramp = min(1.0, (self.steps_done + 1) / self.warmup)
        return self.linear(x) * ramp


def warmup_counter_set_by_loop():
    """`model.steps_done = step`: a warmup ramp read from an int attribute the loop advances."""
    model = Warmup()
    for step in range(CALLS):
        model.steps_done = step
        yield model, (torch.randn(4, 8),)


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.num_noise_samples = 1

    def forward(self, x):
        out = self.linear(x)
        for _ in range(self.num_noise_samples):
            out = out + 0.01 * torch.randn_like(out)
        return out


def sample_count_attribute_grows():
    """`model.num_noise_samples = k` grows by one per call and bounds a loop in forward."""
    model = Noisy()
    for k in range(1, CALLS + 1):
        model.num_noise_samples = k
        yield model, (torch.randn(4, 8),)


class FloatScaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.scale = 1.0

    def forward(self, x):
        return self.linear(x) * self.scale


def float_attribute_decays():
    """`model.scale = 0.9 ** epoch`: a float attribute, which Dynamo takes as a symbol after one change."""
    model = FloatScaled()
    for epoch in range(CALLS):
        model.scale = 0.9 ** epoch
        yield model, (torch.randn(4, 8),)


class Toggled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.use_residual = True

    def forward(self, x):
        out = self.linear(x)
        return out + x if self.use_residual else out


def bool_attribute_toggles():
    """`model.use_residual` flips between True and False: two states, two graphs."""
    model = Toggled()
    for epoch in range(CALLS):
        model.use_residual = epoch % 2 == 0
        yield model, (torch.randn(4, 8),)


def int_attribute_unspecialized_by_config():
    """`model.epoch = epoch` with `allow_unspec_int_on_nn_module = True`: the int becomes a symbol."""
    import torch._dynamo

    previous = torch._dynamo.config.allow_unspec_int_on_nn_module
    torch._dynamo.config.allow_unspec_int_on_nn_module = True
    try:
        model = EpochScaled()
        for epoch in range(CALLS):
            model.epoch = epoch
            yield model, (torch.randn(4, 8),)
    finally:
        torch._dynamo.config.allow_unspec_int_on_nn_module = previous


class FixedDepth(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.depth = depth
        self.linear = nn.Linear(8, 8)

    def forward(self, x, step):
        for _ in range(self.depth):
            x = torch.tanh(self.linear(x))
        return x * (step + 1)


def int_attribute_constant_argument_changes():
    """The int attribute `depth` never changes; the int argument `step` changes every call."""
    model = FixedDepth()
    for step in range(CALLS):
        yield model, (torch.randn(4, 8), step)


def torchlint_targets():
    return {
        "step_counter_in_forward": step_counter_in_forward(),
        "epoch_set_from_outside": epoch_set_from_outside(),
        "warmup_counter_set_by_loop": warmup_counter_set_by_loop(),
        "sample_count_attribute_grows": sample_count_attribute_grows(),
        "float_attribute_decays": float_attribute_decays(),
        "bool_attribute_toggles": bool_attribute_toggles(),
        "int_attribute_unspecialized_by_config": int_attribute_unspecialized_by_config(),
        "int_attribute_constant_argument_changes": int_attribute_constant_argument_changes(),
    }
