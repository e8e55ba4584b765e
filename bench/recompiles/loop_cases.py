"""Recompile cases: Python loops in compiled code whose trip count changes between calls.

Dynamo unrolls a loop over `range(n)`, so each new `n` is a new graph.
"""

import torch
from torch import nn

CALLS = 10


def refine(x, iterations):
    for _ in range(iterations):
        x = x - 0.1 * torch.tanh(x)
    return x


def loop_over_int_argument():
    """`iterations` goes 1..10: `for _ in range(iterations)` unrolls to a new length each call."""
    for iterations in range(1, CALLS + 1):
        yield refine, (torch.randn(4, 8), iterations)


def cumulative_columns(x):
    out = []
    total = torch.zeros_like(x[:, 0])
    for i in range(x.shape[1]):
        total = total + x[:, i]
        out.append(total)
    return torch.stack(out, 1)


def loop_over_tensor_size():
    """The second dimension grows 3..12: `for i in range(x.shape[1])` unrolls over it."""
    for width in range(3, 3 + CALLS):
        yield cumulative_columns, (torch.randn(4, width),)


class UnrolledRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 16)

    def forward(self, sequence):
        h = sequence.new_zeros(sequence.size(1), 16)
        for t in range(sequence.size(0)):
            h = self.cell(sequence[t], h)
        return h


def rnn_over_sequence_length():
    """Sequence lengths 4..13: an RNN cell stepped in a Python loop over `sequence.size(0)`."""
    model = UnrolledRNN()
    for length in range(4, 4 + CALLS):
        yield model, (torch.randn(length, 2, 8),)


def fixed_refine(x):
    for _ in range(4):
        x = x - 0.1 * torch.tanh(x)
    return x


def fixed_trip_count_changing_rows():
    """A loop of four steps on inputs whose row count changes; the trip count never does."""
    for rows in range(2, 2 + CALLS):
        yield fixed_refine, (torch.randn(rows, 8),)


def cumsum_columns(x):
    return torch.cumsum(x, 1)


def vectorized_over_tensor_size():
    """The width grows 3..12, summed by `torch.cumsum` instead of a loop over the columns."""
    for width in range(3, 3 + CALLS):
        yield cumsum_columns, (torch.randn(4, width),)


def torchlint_targets():
    return {
        "loop_over_int_argument": loop_over_int_argument(),
        "loop_over_tensor_size": loop_over_tensor_size(),
        "rnn_over_sequence_length": rnn_over_sequence_length(),
        "fixed_trip_count_changing_rows": fixed_trip_count_changing_rows(),
        "vectorized_over_tensor_size": vectorized_over_tensor_size(),
    }
