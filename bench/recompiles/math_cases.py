"""Recompile cases: `math.*` on a Python float argument of compiled code.

`math.exp` needs a concrete float, so Dynamo specializes on it; tensor math takes a symbol.
"""

import math

import torch

CALLS = 10


def tempered_softmax(logits, temperature):
    return torch.softmax(logits * math.exp(-temperature), -1)


def math_exp_of_temperature():
    """`temperature` anneals from 1.0 down by 0.1 per call and goes through `math.exp`."""
    for step in range(CALLS):
        yield tempered_softmax, (torch.randn(4, 10), 1.0 - 0.1 * step)


def add_noise(x, sigma):
    return x + torch.randn_like(x) * math.sqrt(sigma) + math.log(sigma)


def math_sqrt_of_noise_level():
    """The noise level `sigma` of a schedule changes per step and goes through `math.sqrt`/`math.log`."""
    for step in range(CALLS):
        yield add_noise, (torch.randn(4, 8), 0.5 + 0.1 * step)


def cosine_lr_scale(x, progress):
    return x * 0.5 * (1.0 + math.cos(math.pi * progress))


def math_cos_of_progress():
    """Training progress (step / total) goes through `math.cos` for a cosine ramp."""
    for step in range(CALLS):
        yield cosine_lr_scale, (torch.randn(4, 8), step / CALLS)


def tensor_exp_of_temperature(logits, temperature):
    return torch.softmax(logits * torch.exp(-temperature), -1)


def torch_exp_of_tensor_temperature():
    """The temperature anneals as a 0-d tensor and goes through `torch.exp`."""
    for step in range(CALLS):
        yield tensor_exp_of_temperature, (torch.randn(4, 10), torch.tensor(1.0 - 0.1 * step))


def divided_by_temperature(logits, temperature):
    return torch.softmax(logits / temperature, -1)


def float_argument_plain_arithmetic():
    """The temperature anneals as a Python float used only in tensor arithmetic."""
    for step in range(CALLS):
        yield divided_by_temperature, (torch.randn(4, 10), 1.0 - 0.05 * step)


class ScaledAttention(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.dim = dim
        self.qk = torch.nn.Linear(dim, 2 * dim)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, -1)
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dim), -1)


def math_sqrt_of_constant_attribute():
    """Sequence length changes; `math.sqrt(self.dim)` is of a constant attribute."""
    model = ScaledAttention()
    for length in range(4, 4 + CALLS):
        yield model, (torch.randn(2, length, 16),)


def torchlint_targets():
    return {
        "math_exp_of_temperature": math_exp_of_temperature(),
        "math_sqrt_of_noise_level": math_sqrt_of_noise_level(),
        "math_cos_of_progress": math_cos_of_progress(),
        "torch_exp_of_tensor_temperature": torch_exp_of_tensor_temperature(),
        "float_argument_plain_arithmetic": float_argument_plain_arithmetic(),
        "math_sqrt_of_constant_attribute": math_sqrt_of_constant_attribute(),
    }
