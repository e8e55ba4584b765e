"""Recompile cases: Python floats passed as `alpha=` / `value=` to tensor ops in compiled code.

The eager backend takes them as symbols (one recompile); inductor specializes its Scalar
arguments, so every new value is a new graph there.
"""

import torch

CALLS = 10


def sgd_update(params, grads, lr):
    for p, g in zip(params, grads):
        p.add_(g, alpha=-lr)
    return params


def alpha_learning_rate_decays():
    """A hand-written SGD step, `p.add_(g, alpha=-lr)`, with the lr decayed every step."""
    params = [torch.randn(8, 8), torch.randn(8)]
    for step in range(CALLS):
        grads = [torch.randn_like(p) for p in params]
        yield sgd_update, (params, grads, 0.1 * 0.9 ** step)


def momentum_update(buffer, grad, beta):
    return buffer.mul(beta).add(grad, alpha=1 - beta)


def alpha_momentum_warms_up():
    """`buffer.mul(beta).add(grad, alpha=1 - beta)` with beta warming up from 0.5 toward 0.95."""
    buffer = torch.zeros(8, 8)
    for step in range(CALLS):
        yield momentum_update, (buffer, torch.randn(8, 8), 0.5 + 0.05 * step)


def second_moment(v, g, beta2):
    return v.mul(beta2).addcmul(g, g, value=1 - beta2)


def addcmul_value_changes():
    """`v.mul(beta2).addcmul(g, g, value=1 - beta2)` with a bias-corrected beta that changes per step."""
    v = torch.zeros(8, 8)
    for step in range(1, CALLS + 1):
        yield second_moment, (v, torch.randn(8, 8), 1 - 0.999 ** step)


def tensor_lr_update(params, grads, lr):
    for p, g in zip(params, grads):
        p.sub_(g * lr)
    return params


def learning_rate_as_tensor():
    """The lr decays every step but is passed as a 0-d tensor and multiplied in."""
    params = [torch.randn(8, 8), torch.randn(8)]
    for step in range(CALLS):
        grads = [torch.randn_like(p) for p in params]
        yield tensor_lr_update, (params, grads, torch.tensor(0.1 * 0.9 ** step))


def fixed_alpha_update(params, grads):
    for p, g in zip(params, grads):
        p.add_(g, alpha=-0.01)
    return params


def constant_alpha():
    """`alpha=-0.01` is a constant; only the gradients change."""
    params = [torch.randn(8, 8), torch.randn(8)]
    for _ in range(CALLS):
        yield fixed_alpha_update, (params, [torch.randn_like(p) for p in params])


def torchlint_targets():
    return {
        "alpha_learning_rate_decays": alpha_learning_rate_decays(),
        "alpha_momentum_warms_up": alpha_momentum_warms_up(),
        "addcmul_value_changes": addcmul_value_changes(),
        "learning_rate_as_tensor": learning_rate_as_tensor(),
        "constant_alpha": constant_alpha(),
    }
