"""Cases whose recompiles depend on values only a run shows (view geometry, shape branches, the
first call's path): no rule reads them from the source; `verify --recompiles` does.
"""

import torch
import torch._dynamo

CALLS = 10


def flattened(x):
    return x.reshape(-1, 8).softmax(-1)


def views_of_different_ranks():
    """Inputs alternate between rank 2, 3 and 4 views (sliced, so their strides differ) flattened by `reshape(-1, 8)`."""
    shapes = ((4, 8), (2, 4, 8), (2, 2, 2, 8))
    for step in range(CALLS):
        base = torch.randn(*shapes[step % 3][:-1], 16)
        yield flattened, (base[..., :8],)


def truncated(x):
    if x.shape[1] > 8:
        x = x[:, :8]
    return x.sum(1)


def branch_on_shape():
    """Widths grow 4..13 across a branch at `x.shape[1] > 8`: one graph per side of it."""
    for width in range(4, 4 + CALLS):
        yield truncated, (torch.randn(2, width),)


def add_bias(x, bias):
    if bias is None:
        return x
    return x + bias


def empty_path_on_first_call():
    """The first call passes no bias (no tensor op runs); later calls pass one."""
    for step in range(CALLS):
        yield add_bias, (torch.randn(4, 8), None if step == 0 else torch.randn(8))


def cumulative(x):
    return x.cumsum(0) / x.shape[0]


def size_one_then_growing():
    """A first batch of size 1, marked dynamic, then batches of 2..10."""
    for batch in range(1, CALLS + 1):
        x = torch.randn(batch, 8)
        if batch == 1:
            torch._dynamo.maybe_mark_dynamic(x, 0)
        yield cumulative, (x,)


def torchlint_targets():
    return {
        "views_of_different_ranks": views_of_different_ranks(),
        "branch_on_shape": branch_on_shape(),
        "empty_path_on_first_call": empty_path_on_first_call(),
        "size_one_then_growing": size_one_then_growing(),
    }
