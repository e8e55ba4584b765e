"""Recompile cases: Dynamo settings that force specialization.

Each case sets the setting the way a training script does, and puts it back after its calls.
"""

import torch
import torch._dynamo
from torch import nn

CALLS = 10


def shifted(x, offset):
    return x + offset


def specialize_int_with_changing_int():
    """`specialize_int = True` while an int argument (an offset) changes every call."""
    previous = torch._dynamo.config.specialize_int
    torch._dynamo.config.specialize_int = True
    try:
        for step in range(CALLS):
            yield shifted, (torch.randn(4, 8), step)
    finally:
        torch._dynamo.config.specialize_int = previous


def specialize_float_with_changing_float():
    """`specialize_float = True` while a float argument (an lr-like scale) changes every call."""
    previous = torch._dynamo.config.specialize_float
    torch._dynamo.config.specialize_float = True
    try:
        for step in range(CALLS):
            yield shifted, (torch.randn(4, 8), 0.1 * 0.9 ** step)
    finally:
        torch._dynamo.config.specialize_float = previous


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)

    def forward(self, x):
        return self.layer(x)


def automatic_dynamic_off_with_changing_length():
    """`automatic_dynamic_shapes = False` while the sequence length grows 4..13."""
    previous = torch._dynamo.config.automatic_dynamic_shapes
    torch._dynamo.config.automatic_dynamic_shapes = False
    try:
        model = Encoder().eval()
        for length in range(4, 4 + CALLS):
            yield model, (torch.randn(2, length, 16),)
    finally:
        torch._dynamo.config.automatic_dynamic_shapes = previous


def pooled(x):
    return x.softmax(-1).mean(1)


def mark_static_on_changing_dimension():
    """`torch._dynamo.mark_static(x, 1)` on a dimension that grows 4..13."""
    for length in range(4, 4 + CALLS):
        x = torch.randn(2, length, 16)
        torch._dynamo.mark_static(x, 1)
        yield pooled, (x,)


def mark_dynamic_on_changing_dimension():
    """`torch._dynamo.mark_dynamic(x, 1)` on a dimension that grows 4..13."""
    for length in range(4, 4 + CALLS):
        x = torch.randn(2, length, 16)
        torch._dynamo.mark_dynamic(x, 1)
        yield pooled, (x,)


def specialize_int_with_constant_int():
    """`specialize_int = True`, but the int argument is always 3; only tensor values change."""
    previous = torch._dynamo.config.specialize_int
    torch._dynamo.config.specialize_int = True
    try:
        for _ in range(CALLS):
            yield shifted, (torch.randn(4, 8), 3)
    finally:
        torch._dynamo.config.specialize_int = previous


def automatic_dynamic_off_with_fixed_shapes():
    """`automatic_dynamic_shapes = False` with the same input shape on every call."""
    previous = torch._dynamo.config.automatic_dynamic_shapes
    torch._dynamo.config.automatic_dynamic_shapes = False
    try:
        model = Encoder().eval()
        for _ in range(CALLS):
            yield model, (torch.randn(2, 8, 16),)
    finally:
        torch._dynamo.config.automatic_dynamic_shapes = previous


def torchlint_targets():
    return {
        "specialize_int_with_changing_int": specialize_int_with_changing_int(),
        "specialize_float_with_changing_float": specialize_float_with_changing_float(),
        "automatic_dynamic_off_with_changing_length": automatic_dynamic_off_with_changing_length(),
        "mark_static_on_changing_dimension": mark_static_on_changing_dimension(),
        "mark_dynamic_on_changing_dimension": mark_dynamic_on_changing_dimension(),
        "specialize_int_with_constant_int": specialize_int_with_constant_int(),
        "automatic_dynamic_off_with_fixed_shapes": automatic_dynamic_off_with_fixed_shapes(),
    }
