"""Cases that change a value between calls and still cost at most one recompile (two for
three-way modes and shape branches): what a recompile rule must not flag.
"""

import functools
from dataclasses import dataclass

import torch
from torch import nn

CALLS = 10


def warm(x, step):
    return x * min(1.0, (step + 1) / 20)


def int_argument_every_call():
    """A step counter passed as an int argument, new on every call."""
    for step in range(CALLS):
        yield warm, (torch.randn(4, 8), step)


def first_tokens(x, length):
    return x[:, :length].sum(1)


def slice_bound_argument():
    """A slice bound `x[:, :length]` passed as an int argument that grows every call."""
    for length in range(2, 2 + CALLS):
        yield first_tokens, (torch.randn(4, 16), length)


def noise_of_size(x, size):
    return x.sum() + torch.zeros(size).sum()


def size_tuple_argument():
    """A `size=` tuple argument whose second entry grows every call."""
    for width in range(2, 2 + CALLS):
        yield noise_of_size, (torch.randn(4), (3, width))


@dataclass
class Schedule:
    step: int
    lr: float


def scheduled(x, schedule):
    return x * schedule.lr + schedule.step


def dataclass_fields_through_argument():
    """A dataclass with an int step and a float lr, new values every call."""
    for step in range(CALLS):
        yield scheduled, (torch.randn(4, 8), Schedule(step, 0.1 * 0.9 ** step))


def scaled(x, *, factor):
    return x * factor


def partial_keyword_per_step():
    """`functools.partial(scaled, factor=f)` built fresh each step; the call gets the same code."""
    for step in range(CALLS):
        yield functools.partial(scaled, factor=1.0 + step), (torch.randn(4, 8),)


def lambda_per_step():
    """A fresh lambda each step closing over the step's scale."""
    for step in range(CALLS):
        scale = 1.0 + step
        yield (lambda x: x * scale), (torch.randn(4, 8),)  # noqa: B023 - called before the next step rebinds it


def smooth(x):
    return torch.tanh(x) * 0.5


def torch_compile_called_per_step():
    """`torch.compile(smooth)` called again every step, as a careless loop does."""
    for _ in range(CALLS):
        yield torch.compile(smooth), (torch.randn(4, 8),)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.linear(x))


def model_compiled_per_step():
    """`torch.compile(Small())` on a new model instance every step."""
    for _ in range(CALLS):
        yield torch.compile(Small()), (torch.randn(4, 8),)


def seeded(x):
    return x + torch.rand_like(x)


def manual_seed_each_step():
    """`torch.manual_seed(step)` before each call."""
    for step in range(CALLS):
        torch.manual_seed(step)
        yield seeded, (torch.randn(4, 8),)


class WithDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.linear(x))


def train_eval_alternate():
    """`model.train()` for a step, `model.eval()` for validation, alternating."""
    model = WithDropout()
    for step in range(CALLS):
        model.train(step % 2 == 0)
        yield model, (torch.randn(4, 8),)




def grad_mode_toggles():
    """Training steps with gradients and evaluation steps under `no_grad`, alternating."""
    model = Small()
    for step in range(CALLS):
        torch.set_grad_enabled(step % 2 == 0)
        try:
            yield model, (torch.randn(4, 8),)
        finally:
            torch.set_grad_enabled(True)


def dtype_toggles():
    """Inputs alternate between float32 and float64 (two dtypes, two graphs)."""
    for step in range(CALLS):
        yield smooth, (torch.randn(4, 8, dtype=torch.float32 if step % 2 else torch.float64),)


def masked(x, mask):
    if mask is None:
        return x.softmax(-1)
    return x.masked_fill(mask, float("-inf")).softmax(-1)


def optional_mask_none_or_tensor():
    """An attention mask that is sometimes None and sometimes a tensor."""
    for step in range(CALLS):
        x = torch.randn(4, 8)
        yield masked, (x, None if step % 2 else x > 1.0)


def biased(x, bias=None):
    return x + bias if bias is not None else x * 2


def keyword_present_or_absent():
    """The `bias=` keyword is passed on even steps and left out on odd ones."""
    for step in range(CALLS):
        x = torch.randn(4, 8)
        yield (biased, (x,), {"bias": torch.ones(8)}) if step % 2 == 0 else (biased, (x,))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)

    def forward(self, tokens):
        return self.layer(self.embed(tokens))


def padded_buckets():
    """Sequences padded to buckets of 8, 16 and 32 tokens."""
    model = TinyLM().eval()
    for step in range(CALLS):
        yield model, (torch.randint(0, 32, (2, (8, 16, 32)[step % 3])),)


def sequence_length_changes():
    """Unpadded sequences of 5..14 tokens."""
    model = TinyLM().eval()
    for length in range(5, 5 + CALLS):
        yield model, (torch.randint(0, 32, (2, length)),)


def attend_to_cache(query, keys, values):
    weights = torch.softmax(query @ keys.transpose(-1, -2), -1)
    return weights @ values


def kv_cache_grows():
    """Decoding: the key/value cache grows by one position per call."""
    keys, values = torch.randn(1, 1, 16), torch.randn(1, 1, 16)
    for _ in range(CALLS):
        yield attend_to_cache, (torch.randn(1, 1, 16), keys, values)
        keys = torch.cat([keys, torch.randn(1, 1, 16)], 1)
        values = torch.cat([values, torch.randn(1, 1, 16)], 1)


def batch_one_then_larger():
    """A batch of 1 first (a smoke test), then batches of 2..10."""
    model = Small()
    for batch in range(1, CALLS + 1):
        yield model, (torch.randn(batch, 8),)


def autocast_toggles():
    """Mixed-precision steps under `torch.autocast("cpu")` alternate with full-precision ones."""
    model = Small()
    for step in range(CALLS):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=step % 2 == 0):
            yield model, (torch.randn(4, 8),)


def torchlint_targets():
    return {
        "int_argument_every_call": int_argument_every_call(),
        "slice_bound_argument": slice_bound_argument(),
        "size_tuple_argument": size_tuple_argument(),
        "dataclass_fields_through_argument": dataclass_fields_through_argument(),
        "partial_keyword_per_step": partial_keyword_per_step(),
        "lambda_per_step": lambda_per_step(),
        "torch_compile_called_per_step": torch_compile_called_per_step(),
        "model_compiled_per_step": model_compiled_per_step(),
        "manual_seed_each_step": manual_seed_each_step(),
        "train_eval_alternate": train_eval_alternate(),
        "grad_mode_toggles": grad_mode_toggles(),
        "dtype_toggles": dtype_toggles(),
        "optional_mask_none_or_tensor": optional_mask_none_or_tensor(),
        "keyword_present_or_absent": keyword_present_or_absent(),
        "padded_buckets": padded_buckets(),
        "sequence_length_changes": sequence_length_changes(),
        "kv_cache_grows": kv_cache_grows(),
        "batch_one_then_larger": batch_one_then_larger(),
        "autocast_toggles": autocast_toggles(),
    }
