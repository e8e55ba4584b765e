"""Recompile cases from optimizers: torch.optim 2.13 and pytorch_optimizer 4.1.0's own `step`,
compiled and called once per training step of a ten-step loop, with gradients computed eagerly.

Between calls the gradients change, the optimizer's step counts advance, and a schedule changes
the learning rate.
"""

import torch

STEPS = 10


def _params():
    torch.manual_seed(0)
    return [torch.nn.Parameter(torch.randn(8, 8)), torch.nn.Parameter(torch.randn(8))]


def _steps(optimizer, params, schedule=None):
    """A fresh gradient before each compiled `step()`; the schedule (if any) steps after it."""
    step = optimizer.step
    for _ in range(STEPS):
        for p in params:
            p.grad = torch.randn_like(p)
        yield step, ()
        if schedule is not None:
            schedule.step()


def _decayed(optimizer):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.9 ** epoch)


def torch_sgd_lambda_lr():
    """torch.optim.SGD.step with `LambdaLR` decaying a float lr after every step."""
    params = _params()
    optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    yield from _steps(optimizer, params, _decayed(optimizer))


def torch_adam_lambda_lr():
    """torch.optim.Adam.step with `LambdaLR` decaying a float lr after every step."""
    params = _params()
    optimizer = torch.optim.Adam(params, lr=0.01)
    yield from _steps(optimizer, params, _decayed(optimizer))


def torch_adam_tensor_lr():
    """torch.optim.Adam(lr=torch.tensor(0.01)).step with `LambdaLR` changing the tensor lr in place."""
    params = _params()
    optimizer = torch.optim.Adam(params, lr=torch.tensor(0.01))
    yield from _steps(optimizer, params, _decayed(optimizer))


def torch_adamw_constant_lr():
    """torch.optim.AdamW.step at a constant lr: only the gradients and Adam's tensor step counts change."""
    params = _params()
    yield from _steps(torch.optim.AdamW(params, lr=0.01), params)


def torch_sgd_lr_set_by_hand():
    """torch.optim.SGD.step with `group["lr"]` written by the loop before each step (a warmup ramp)."""
    params = _params()
    optimizer = torch.optim.SGD(params, lr=0.0)
    step = optimizer.step
    for index in range(STEPS):
        for group in optimizer.param_groups:
            group["lr"] = 0.01 * (index + 1)
        for p in params:
            p.grad = torch.randn_like(p)
        yield step, ()


def _pytorch_optimizer(name, **options):
    import pytorch_optimizer

    params = _params()
    optimizer = getattr(pytorch_optimizer, name)(params, **options)
    return optimizer, params


def po_lion_lambda_lr():
    """pytorch_optimizer Lion.step with `LambdaLR` decaying the lr after every step."""
    optimizer, params = _pytorch_optimizer("Lion", lr=1e-3)
    yield from _steps(optimizer, params, _decayed(optimizer))


def po_adabelief_constant_lr():
    """pytorch_optimizer AdaBelief.step at a constant lr: its int `group["step"]` advances per call."""
    optimizer, params = _pytorch_optimizer("AdaBelief", lr=1e-3)
    yield from _steps(optimizer, params)


def po_lamb_lambda_lr():
    """pytorch_optimizer Lamb.step with `LambdaLR` decaying the lr after every step."""
    optimizer, params = _pytorch_optimizer("Lamb", lr=1e-3)
    yield from _steps(optimizer, params, _decayed(optimizer))


def po_madgrad_constant_lr():
    """pytorch_optimizer MADGRAD.step at a constant lr: its step count advances per call."""
    optimizer, params = _pytorch_optimizer("MADGRAD", lr=1e-3)
    yield from _steps(optimizer, params)


def po_adamp_lambda_lr():
    """pytorch_optimizer AdamP.step with `LambdaLR` decaying the lr after every step."""
    optimizer, params = _pytorch_optimizer("AdamP", lr=1e-3)
    yield from _steps(optimizer, params, _decayed(optimizer))


def po_adan_constant_lr():
    """pytorch_optimizer Adan.step at a constant lr: its step count advances per call."""
    optimizer, params = _pytorch_optimizer("Adan", lr=1e-3)
    yield from _steps(optimizer, params)


def po_sgdw_lambda_lr():
    """pytorch_optimizer SGDW.step with `LambdaLR` decaying the lr after every step."""
    optimizer, params = _pytorch_optimizer("SGDW", lr=1e-2, momentum=0.9)
    yield from _steps(optimizer, params, _decayed(optimizer))


def po_lookahead_step():
    """pytorch_optimizer Lookahead(AdamW).step: the wrapper syncs its slow weights every fifth call."""
    import pytorch_optimizer

    params = _params()
    optimizer = pytorch_optimizer.Lookahead(torch.optim.AdamW(params, lr=1e-3), k=5)
    yield from _steps(optimizer, params)


def torchlint_targets():
    return {
        "torch_sgd_lambda_lr": torch_sgd_lambda_lr(),
        "torch_adam_lambda_lr": torch_adam_lambda_lr(),
        "torch_adam_tensor_lr": torch_adam_tensor_lr(),
        "torch_adamw_constant_lr": torch_adamw_constant_lr(),
        "torch_sgd_lr_set_by_hand": torch_sgd_lr_set_by_hand(),
        "po_lion_lambda_lr": po_lion_lambda_lr(),
        "po_adabelief_constant_lr": po_adabelief_constant_lr(),
        "po_lamb_lambda_lr": po_lamb_lambda_lr(),
        "po_madgrad_constant_lr": po_madgrad_constant_lr(),
        "po_adamp_lambda_lr": po_adamp_lambda_lr(),
        "po_adan_constant_lr": po_adan_constant_lr(),
        "po_sgdw_lambda_lr": po_sgdw_lambda_lr(),
        "po_lookahead_step": po_lookahead_step(),
    }
