"""Recompile cases from ODE and SDE solvers, torchdiffeq 0.2.5 and torchsde 0.2.6: the library's
own `odeint` / `sdeint`, compiled and called once per training step or per evaluation, with the
time span, the step size or the number of steps changing between calls.
"""

import torch
from torch import nn

CALLS = 10


class Decay(nn.Module):
    def __init__(self):
        super().__init__()
        self.rate = nn.Linear(4, 4)

    def forward(self, t, y):
        return -torch.tanh(self.rate(y))


def odeint_rk4_growing_span():
    """`odeint(f, y0, t, method="rk4")` with the span's end growing 1.0..1.9 (fixed step 0.25)."""
    from torchdiffeq import odeint

    func = Decay()
    for index in range(CALLS):
        t = torch.linspace(0.0, 1.0 + 0.1 * index, 3)
        yield odeint, (func, torch.randn(2, 4), t), {"method": "rk4", "options": {"step_size": 0.25}}


def odeint_euler_step_size():
    """`odeint(..., method="euler", options={"step_size": h})` with h from 0.1 up by 0.02 (a Python float)."""
    from torchdiffeq import odeint

    func = Decay()
    t = torch.tensor([0.0, 1.0])
    for index in range(CALLS):
        yield odeint, (func, torch.randn(2, 4), t), {"method": "euler", "options": {"step_size": 0.1 + 0.02 * index}}


def odeint_rk4_more_points():
    """`odeint(..., method="rk4")` evaluated at 3..12 time points."""
    from torchdiffeq import odeint

    func = Decay()
    for points in range(3, 3 + CALLS):
        yield odeint, (func, torch.randn(2, 4), torch.linspace(0.0, 1.0, points)), {"method": "rk4"}


def odeint_dopri5_tolerance():
    """`odeint(..., method="dopri5", rtol=r)` with the tolerance tightened per evaluation."""
    from torchdiffeq import odeint

    func = Decay()
    t = torch.tensor([0.0, 0.5])
    for index in range(CALLS):
        yield odeint, (func, torch.randn(2, 4), t), {"method": "dopri5", "rtol": 1e-2 / (index + 1), "atol": 1e-3}


def odeint_midpoint_new_data():
    """`odeint(..., method="midpoint")` on a new batch each call, same span and step."""
    from torchdiffeq import odeint

    func = Decay()
    t = torch.linspace(0.0, 1.0, 4)
    for _ in range(CALLS):
        yield odeint, (func, torch.randn(2, 4), t), {"method": "midpoint"}


class Diffusion(nn.Module):
    noise_type = "diagonal"
    sde_type = "ito"

    def __init__(self):
        super().__init__()
        self.drift = nn.Linear(3, 3)

    def f(self, t, y):
        return -torch.tanh(self.drift(y))

    def g(self, t, y):
        return 0.1 * torch.ones_like(y)


def sdeint_euler_dt():
    """`sdeint(sde, y0, ts, dt=dt)` with dt from 0.05 up by 0.01 (a Python float)."""
    import torchsde

    sde = Diffusion()
    ts = torch.tensor([0.0, 0.5])
    for index in range(CALLS):
        yield torchsde.sdeint, (sde, torch.randn(2, 3), ts), {"dt": 0.05 + 0.01 * index, "method": "euler"}


def sdeint_euler_growing_span():
    """`sdeint(sde, y0, ts, dt=0.1)` over spans ending at 0.3..1.2."""
    import torchsde

    sde = Diffusion()
    for index in range(CALLS):
        ts = torch.tensor([0.0, 0.3 + 0.1 * index])
        yield torchsde.sdeint, (sde, torch.randn(2, 3), ts), {"dt": 0.1, "method": "euler"}


def sdeint_euler_new_data():
    """`sdeint(sde, y0, ts, dt=0.1)` on a new batch each call, same span and step."""
    import torchsde

    sde = Diffusion()
    ts = torch.tensor([0.0, 0.5])
    for _ in range(CALLS):
        yield torchsde.sdeint, (sde, torch.randn(2, 3), ts), {"dt": 0.1, "method": "euler"}


def torchlint_targets():
    return {
        "odeint_rk4_growing_span": odeint_rk4_growing_span(),
        "odeint_euler_step_size": odeint_euler_step_size(),
        "odeint_rk4_more_points": odeint_rk4_more_points(),
        "odeint_dopri5_tolerance": odeint_dopri5_tolerance(),
        "odeint_midpoint_new_data": odeint_midpoint_new_data(),
        "sdeint_euler_dt": sdeint_euler_dt(),
        "sdeint_euler_growing_span": sdeint_euler_growing_span(),
        "sdeint_euler_new_data": sdeint_euler_new_data(),
    }
