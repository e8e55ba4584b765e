"""Verify targets: torchdiffeq 0.2.5, ODE solvers. Every solver `odeint` offers (adaptive Runge-Kutta,
fixed-grid, Adams, SciPy), their options (tolerances, step size, cubic interpolation, perturb,
jump_t/step_t, reversed time, tuple states), `odeint_adjoint`, `odeint_event` and `odeint_dense`, on a tiny MLP vector field."""

import torch
from torch import nn


BATCH, DIM, HIDDEN = 3, 4, 16


class ODEFunc(nn.Module):
    """dy/dt = f(t, y): a small MLP that also sees the time."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM + 1, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, DIM))

    def forward(self, t, y):
        tt = t.expand(y.shape[0], 1)
        return self.net(torch.cat([y, tt], dim=-1))


class CoupledFunc(nn.Module):
    """A second-order system written as a tuple state (position, velocity)."""

    def __init__(self):
        super().__init__()
        self.force = nn.Sequential(nn.Linear(DIM, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, DIM))

    def forward(self, t, state):
        x, v = state
        return v, self.force(x) - 0.1 * v


class BallFunc(nn.Module):
    """A falling ball with learnable gravity and drag: the bouncing-ball example of torchdiffeq."""

    def __init__(self):
        super().__init__()
        self.gravity = nn.Parameter(torch.tensor([9.8]))
        self.drag = nn.Parameter(torch.tensor([0.1]))

    def forward(self, t, state):
        pos, vel = state
        return vel, -self.gravity - self.drag * vel


def _hits_ground(t, state):
    pos, _ = state
    return pos.sum()


def torchlint_targets():
    import torchdiffeq

    torch.manual_seed(0)
    func = ODEFunc().eval()
    coupled = CoupledFunc().eval()
    ball = BallFunc().eval()
    y0 = torch.randn(BATCH, DIM)
    t = torch.linspace(0.0, 1.0, 5)
    t_rev = torch.linspace(1.0, 0.0, 5)
    tol = {"rtol": 1e-3, "atol": 1e-4}
    odeint = torchdiffeq.odeint
    return {
        # Adaptive Runge-Kutta solvers.
        "ode_dopri5": (odeint, (func, y0, t), {**tol, "method": "dopri5"}),
        "ode_dopri8": (odeint, (func, y0, t), {**tol, "method": "dopri8"}),
        "ode_bosh3": (odeint, (func, y0, t), {**tol, "method": "bosh3"}),
        "ode_adaptive_heun": (odeint, (func, y0, t), {**tol, "method": "adaptive_heun"}),
        "ode_fehlberg2": (odeint, (func, y0, t), {**tol, "method": "fehlberg2"}),
        # Adaptive with options: a first step, a maximum step, a jump in the vector field, and the default method.
        "ode_dopri5_options": (odeint, (func, y0, t), {
            **tol, "method": "dopri5",
            "options": {"first_step": 0.05, "max_step": 0.3, "jump_t": torch.tensor([0.45]),
                        "step_t": torch.tensor([0.6])}}),
        "ode_default_reverse": (odeint, (func, y0, t_rev), tol),
        "ode_dopri5_tuple": (odeint, (coupled, (y0, torch.zeros_like(y0)), t), {**tol, "method": "dopri5"}),
        # Fixed-grid solvers.
        "ode_euler": (odeint, (func, y0, t), {"method": "euler", "options": {"step_size": 0.1}}),
        "ode_midpoint_cubic": (odeint, (func, y0, t),
                               {"method": "midpoint", "options": {"step_size": 0.15, "interp": "cubic"}}),
        "ode_rk4_perturb": (odeint, (func, y0, t), {"method": "rk4", "options": {"step_size": 0.25, "perturb": True}}),
        "ode_heun3": (odeint, (func, y0, t), {"method": "heun3"}),
        "ode_heun2_reverse_tuple": (odeint, (coupled, (y0, torch.zeros_like(y0)), t_rev),
                                    {"method": "heun2", "options": {"step_size": 0.25}}),
        "ode_explicit_adams": (odeint, (func, y0, t), {"method": "explicit_adams", "options": {"step_size": 0.1}}),
        "ode_implicit_adams": (odeint, (func, y0, t),
                               {**tol, "method": "implicit_adams", "options": {"step_size": 0.1, "max_iters": 2}}),
        # SciPy's solve_ivp behind the same interface.
        "ode_scipy_rk45": (odeint, (func, y0, t), {**tol, "method": "scipy_solver", "options": {"solver": "RK45"}}),
        # Adjoint method, event handling and dense output.
        "ode_adjoint": (torchdiffeq.odeint_adjoint, (func, y0, t), {
            **tol, "method": "dopri5", "adjoint_params": tuple(func.parameters())}),
        "ode_adjoint_rk4": (torchdiffeq.odeint_adjoint, (func, y0, t), {
            "method": "rk4", "options": {"step_size": 0.25}, "adjoint_method": "euler",
            "adjoint_options": {"step_size": 0.25}}),
        "ode_event": (torchdiffeq.odeint_event, (ball, (torch.tensor([1.0]), torch.tensor([0.0])), torch.tensor(0.0)),
                      {"event_fn": _hits_ground, **tol, "method": "dopri5"}),
        "ode_dense": (torchdiffeq.odeint_dense, (func, y0, torch.tensor(0.0), torch.tensor(1.0)),
                      {**tol, "method": "dopri5"}),
    }


COMPILES = {
    "ode_dopri5": ["torchdiffeq._impl.odeint.odeint"],
    "ode_dopri8": ["torchdiffeq._impl.odeint.odeint"],
    "ode_bosh3": ["torchdiffeq._impl.odeint.odeint"],
    "ode_adaptive_heun": ["torchdiffeq._impl.odeint.odeint"],
    "ode_fehlberg2": ["torchdiffeq._impl.odeint.odeint"],
    "ode_dopri5_options": ["torchdiffeq._impl.odeint.odeint"],
    "ode_default_reverse": ["torchdiffeq._impl.odeint.odeint"],
    "ode_dopri5_tuple": ["torchdiffeq._impl.odeint.odeint"],
    "ode_euler": ["torchdiffeq._impl.odeint.odeint"],
    "ode_midpoint_cubic": ["torchdiffeq._impl.odeint.odeint"],
    "ode_rk4_perturb": ["torchdiffeq._impl.odeint.odeint"],
    "ode_heun3": ["torchdiffeq._impl.odeint.odeint"],
    "ode_heun2_reverse_tuple": ["torchdiffeq._impl.odeint.odeint"],
    "ode_explicit_adams": ["torchdiffeq._impl.odeint.odeint"],
    "ode_implicit_adams": ["torchdiffeq._impl.odeint.odeint"],
    "ode_scipy_rk45": ["torchdiffeq._impl.odeint.odeint"],
    "ode_adjoint": ["torchdiffeq._impl.adjoint.odeint_adjoint"],
    "ode_adjoint_rk4": ["torchdiffeq._impl.adjoint.odeint_adjoint"],
    "ode_event": ["torchdiffeq._impl.odeint.odeint_event"],
    "ode_dense": ["torchdiffeq._impl.odeint.odeint_dense"],
}
