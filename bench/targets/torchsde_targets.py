"""Verify targets: torchsde 0.2.6, stochastic differential equation solvers. `sdeint` with every method
(Euler-Maruyama, Milstein, SRK, midpoint, Heun, Euler-Heun, reversible Heun, log-ODE) over the four noise
types, Ito and Stratonovich, adaptive stepping, the latent-SDE `logqp` penalty, `sdeint_adjoint`, and
sampling the Brownian motions (BrownianInterval, BrownianTree, BrownianPath) directly."""

import random

import numpy as np
import torch
from torch import nn


BATCH, STATE, BROWNIAN, HIDDEN = 3, 2, 3, 8


def _mlp(out):
    return nn.Sequential(nn.Linear(STATE + 1, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, out))


class NeuralSDE(nn.Module):
    """A neural SDE with time-dependent MLP drift and diffusion, for any noise type."""

    def __init__(self, noise_type, sde_type="ito"):
        super().__init__()
        self.noise_type = noise_type
        self.sde_type = sde_type
        self.drift = _mlp(STATE)
        out = {"diagonal": STATE, "additive": STATE * BROWNIAN, "scalar": STATE, "general": STATE * BROWNIAN}
        self.diffusion = _mlp(out[noise_type]) if noise_type != "additive" else None
        if noise_type == "additive":
            self.sigma = nn.Parameter(0.1 * torch.randn(STATE, BROWNIAN))

    def _ty(self, t, y):
        return torch.cat([y, t.expand(y.shape[0], 1)], dim=-1)

    def f(self, t, y):
        return self.drift(self._ty(t, y))

    def g(self, t, y):
        if self.noise_type == "additive":
            return self.sigma.expand(y.shape[0], STATE, BROWNIAN)
        out = torch.sigmoid(self.diffusion(self._ty(t, y)))
        if self.noise_type == "diagonal":
            return out
        if self.noise_type == "scalar":
            return out.unsqueeze(-1)
        return out.view(y.shape[0], STATE, BROWNIAN)


class LatentSDE(NeuralSDE):
    """The latent SDE of torchsde's examples: a posterior drift `f`, a prior drift `h`, diagonal noise."""

    def __init__(self):
        super().__init__("diagonal")
        self.prior = _mlp(STATE)

    def h(self, t, y):
        return self.prior(self._ty(t, y))


class GeometricBM(nn.Module):
    """Geometric Brownian motion written with `f_and_g`, torchsde's fused drift-and-diffusion interface."""

    noise_type = "diagonal"
    sde_type = "stratonovich"

    def __init__(self):
        super().__init__()
        self.mu = nn.Parameter(torch.full((STATE,), 0.5))
        self.sigma = nn.Parameter(torch.full((STATE,), 0.3))

    def f_and_g(self, t, y):
        return self.mu * y, self.sigma * y


def torchlint_targets():
    import torchsde

    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    y0 = torch.rand(BATCH, STATE)
    ts = torch.linspace(0.0, 0.4, 3)
    fixed = {"dt": 0.1}

    def sde(noise, kind="ito"):
        return NeuralSDE(noise, kind).eval()

    interval = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(BATCH, BROWNIAN), entropy=0,
                                         levy_area_approximation="space-time")
    tree = torchsde.BrownianTree(t0=0.0, w0=torch.zeros(BATCH, BROWNIAN), t1=1.0, tol=1e-2, entropy=0)
    path = torchsde.BrownianPath(t0=0.0, w0=torch.zeros(BATCH, BROWNIAN))
    sdeint = torchsde.sdeint
    return {
        # Ito SDEs: the default (SRK) for diagonal, additive and scalar noise, Euler for general noise.
        "sde_srk_diagonal": (sdeint, (sde("diagonal"), y0, ts), fixed),
        "sde_srk_additive": (sdeint, (sde("additive"), y0, ts), fixed),
        "sde_srk_scalar": (sdeint, (sde("scalar"), y0, ts), fixed),
        "sde_euler_general": (sdeint, (sde("general"), y0, ts), {**fixed, "method": "euler"}),
        "sde_milstein": (sdeint, (sde("diagonal"), y0, ts), {**fixed, "method": "milstein"}),
        "sde_milstein_grad_free": (sdeint, (sde("scalar"), y0, ts),
                                   {**fixed, "method": "milstein", "options": {"grad_free": True}}),
        "sde_euler_adaptive": (sdeint, (sde("additive"), y0, ts),
                               {"dt": 0.2, "method": "euler", "adaptive": True, "rtol": 1e-2, "atol": 1e-2}),
        # Stratonovich SDEs.
        "sde_midpoint": (sdeint, (sde("diagonal", "stratonovich"), y0, ts), fixed),
        "sde_heun_general": (sdeint, (sde("general", "stratonovich"), y0, ts), {**fixed, "method": "heun"}),
        "sde_euler_heun": (sdeint, (sde("diagonal", "stratonovich"), y0, ts), {**fixed, "method": "euler_heun"}),
        "sde_reversible_heun": (sdeint, (sde("general", "stratonovich"), y0, ts),
                                {**fixed, "method": "reversible_heun"}),
        "sde_log_ode": (sdeint, (sde("general", "stratonovich"), y0, ts), {**fixed, "method": "log_ode"}),
        "sde_milstein_strat": (sdeint, (sde("diagonal", "stratonovich"), y0, ts), {**fixed, "method": "milstein"}),
        "sde_reversible_heun_f_and_g": (sdeint, (GeometricBM().eval(), y0, ts),
                                        {**fixed, "method": "reversible_heun"}),
        # The latent-SDE KL penalty, with a user-supplied Brownian motion and renamed methods.
        "sde_logqp": (sdeint, (LatentSDE().eval(), y0, ts), {
            **fixed, "method": "euler", "logqp": True, "names": {"drift": "f", "prior_drift": "h"},
            "bm": torchsde.BrownianInterval(t0=0.0, t1=0.5, size=(BATCH, STATE + 1), entropy=1)}),
        # The stochastic adjoint.
        "sde_adjoint": (torchsde.sdeint_adjoint, (sde("diagonal"), y0, ts), {**fixed, "method": "euler"}),
        "sde_adjoint_reversible_heun": (torchsde.sdeint_adjoint, (sde("general", "stratonovich"), y0, ts), {
            **fixed, "method": "reversible_heun", "adjoint_method": "adjoint_reversible_heun"}),
        # Sampling Brownian motion directly: increments, a point value, and the Levy area.
        "sde_bm_interval": (interval.__call__, (torch.tensor(0.25), torch.tensor(0.5)), {"return_U": True}),
        "sde_bm_tree": (tree.__call__, (0.3, 0.7)),
        "sde_bm_path": (path.__call__, (0.2, 0.6)),
    }


COMPILES = {
    "sde_srk_diagonal": ["torchsde._core.sdeint.sdeint"],
    "sde_srk_additive": ["torchsde._core.sdeint.sdeint"],
    "sde_srk_scalar": ["torchsde._core.sdeint.sdeint"],
    "sde_euler_general": ["torchsde._core.sdeint.sdeint"],
    "sde_milstein": ["torchsde._core.sdeint.sdeint"],
    "sde_milstein_grad_free": ["torchsde._core.sdeint.sdeint"],
    "sde_euler_adaptive": ["torchsde._core.sdeint.sdeint"],
    "sde_midpoint": ["torchsde._core.sdeint.sdeint"],
    "sde_heun_general": ["torchsde._core.sdeint.sdeint"],
    "sde_euler_heun": ["torchsde._core.sdeint.sdeint"],
    "sde_reversible_heun": ["torchsde._core.sdeint.sdeint"],
    "sde_log_ode": ["torchsde._core.sdeint.sdeint"],
    "sde_milstein_strat": ["torchsde._core.sdeint.sdeint"],
    "sde_reversible_heun_f_and_g": ["torchsde._core.sdeint.sdeint"],
    "sde_logqp": ["torchsde._core.sdeint.sdeint"],
    "sde_adjoint": ["torchsde._core.adjoint.sdeint_adjoint"],
    "sde_adjoint_reversible_heun": ["torchsde._core.adjoint.sdeint_adjoint"],
    "sde_bm_interval": ["torchsde._brownian.brownian_interval.BrownianInterval.__call__"],
    "sde_bm_tree": ["torchsde._brownian.derived.BrownianTree.__call__"],
    "sde_bm_path": ["torchsde._brownian.derived.BrownianPath.__call__"],
}
