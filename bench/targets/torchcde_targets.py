"""Verify targets: torchcde 0.2.5, neural controlled differential equations for irregular time series.
Interpolation coefficients (Hermite with backward differences, natural cubic, linear, rectilinear, with
missing values), evaluating and differentiating the CubicSpline and LinearInterpolation controls, and
`cdeint` through the torchdiffeq and torchsde backends, with and without the adjoint."""

import torch
from torch import nn


BATCH, LENGTH, CHANNELS, HIDDEN = 2, 4, 3, 8


class CDEFunc(nn.Module):
    """f_theta(z): maps the hidden state to a (hidden, input channels) matrix, as in torchcde's README."""

    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(HIDDEN, 16)
        self.linear2 = nn.Linear(16, HIDDEN * CHANNELS)

    def forward(self, t, z):
        z = torch.relu(self.linear1(z))
        return torch.tanh(self.linear2(z)).view(*z.shape[:-1], HIDDEN, CHANNELS)


class CDEProdFunc(CDEFunc):
    """The same vector field, with `prod` (the matrix-vector product with dX/dt) written out: torchcde's fast path."""

    def prod(self, t, z, dXdt):
        return (self.forward(t, z) @ dXdt.unsqueeze(-1)).squeeze(-1)


class NeuralCDE(nn.Module):
    """The README's model: coefficients -> spline -> cdeint -> linear readout of the final state."""

    def __init__(self):
        super().__init__()
        self.initial = nn.Linear(CHANNELS, HIDDEN)
        self.func = CDEFunc()
        self.readout = nn.Linear(HIDDEN, 2)

    def forward(self, coeffs):
        import torchcde

        X = torchcde.CubicSpline(coeffs)
        z0 = self.initial(X.evaluate(X.interval[0]))
        z_t = torchcde.cdeint(X=X, func=self.func, z0=z0, t=X.interval, adjoint=False,
                              method="rk4", options={"step_size": 1.0})
        return self.readout(z_t[:, 1])


def torchlint_targets():
    import torchcde

    torch.manual_seed(0)
    t = torch.linspace(0.0, 3.0, LENGTH)
    x = torch.cat([t.expand(BATCH, LENGTH).unsqueeze(-1), torch.randn(BATCH, LENGTH, CHANNELS - 1)], dim=-1)
    # Irregularly sampled data: missing observations are NaN.
    x_missing = x.clone()
    x_missing[0, 2, 1] = float("nan")
    x_missing[1, 1:3, 2] = float("nan")
    t_irregular = torch.tensor([0.0, 0.4, 1.5, 3.0])

    hermite = torchcde.hermite_cubic_coefficients_with_backward_differences(x)
    natural = torchcde.natural_cubic_coeffs(x)
    linear = torchcde.linear_interpolation_coeffs(x)
    cubic_spline = torchcde.CubicSpline(hermite)
    natural_spline = torchcde.CubicSpline(natural, t=t)
    linear_interp = torchcde.LinearInterpolation(linear)
    times = torch.tensor([0.3, 1.7, 2.9])

    func = CDEFunc().eval()
    prod_func = CDEProdFunc().eval()
    z0 = torch.randn(BATCH, HIDDEN)
    fixed = {"method": "rk4", "options": {"step_size": 0.5}}
    return {
        # Interpolation coefficients: the preprocessing step users compile with their data pipeline.
        "cde_hermite_coeffs": (torchcde.hermite_cubic_coefficients_with_backward_differences, (x_missing,),
                               {"t": t_irregular}),
        "cde_natural_cubic_coeffs": (torchcde.natural_cubic_coeffs, (x,)),
        "cde_natural_cubic_coeffs_missing": (torchcde.natural_cubic_coeffs, (x_missing,), {"t": t_irregular}),
        "cde_natural_cubic_spline_coeffs": (torchcde.natural_cubic_spline_coeffs, (x,)),
        "cde_linear_coeffs_missing": (torchcde.linear_interpolation_coeffs, (x_missing,), {"t": t_irregular}),
        "cde_linear_coeffs_rectilinear": (torchcde.linear_interpolation_coeffs, (x_missing,), {"rectilinear": 0}),
        # Evaluating the controls and their derivatives at a scalar time and at a batch of times.
        "cde_cubic_evaluate": (cubic_spline.evaluate, (times,)),
        "cde_cubic_derivative": (natural_spline.derivative, (torch.tensor(2.5),)),
        "cde_linear_evaluate": (linear_interp.evaluate, (torch.tensor(2.5),)),
        "cde_linear_derivative": (linear_interp.derivative, (times,)),
        # Solving the CDE.
        "cde_cdeint_rk4": (torchcde.cdeint, (cubic_spline, func, z0, cubic_spline.interval), {
            "adjoint": False, **fixed}),
        "cde_cdeint_dopri5_adjoint": (torchcde.cdeint, (cubic_spline, func, z0, cubic_spline.grid_points), {
            "method": "dopri5", "rtol": 1e-2, "atol": 1e-3}),
        "cde_cdeint_linear_jump": (torchcde.cdeint, (linear_interp, prod_func, z0, linear_interp.interval), {
            "adjoint": False, "method": "dopri5", "rtol": 1e-2, "atol": 1e-3,
            "options": {"jump_t": linear_interp.grid_points}}),
        "cde_cdeint_torchsde": (torchcde.cdeint, (natural_spline, func, z0, natural_spline.interval), {
            "adjoint": False, "backend": "torchsde", "method": "reversible_heun", "dt": 0.5}),
        "cde_model_cubic": (NeuralCDE().eval(), (hermite,)),
    }


COMPILES = {
    "cde_hermite_coeffs": [
        "torchcde.interpolation_hermite_cubic_bdiff.hermite_cubic_coefficients_with_backward_differences"],
    "cde_natural_cubic_coeffs": ["torchcde.interpolation_cubic.natural_cubic_coeffs"],
    "cde_natural_cubic_coeffs_missing": ["torchcde.interpolation_cubic.natural_cubic_coeffs"],
    "cde_natural_cubic_spline_coeffs": ["torchcde.interpolation_cubic.natural_cubic_spline_coeffs"],
    "cde_linear_coeffs_missing": ["torchcde.interpolation_linear.linear_interpolation_coeffs"],
    "cde_linear_coeffs_rectilinear": ["torchcde.interpolation_linear.linear_interpolation_coeffs"],
    "cde_cubic_evaluate": ["torchcde.interpolation_cubic.CubicSpline.evaluate"],
    "cde_cubic_derivative": ["torchcde.interpolation_cubic.CubicSpline.derivative"],
    "cde_linear_evaluate": ["torchcde.interpolation_linear.LinearInterpolation.evaluate"],
    "cde_linear_derivative": ["torchcde.interpolation_linear.LinearInterpolation.derivative"],
    "cde_cdeint_rk4": ["torchcde.solver.cdeint"],
    "cde_cdeint_dopri5_adjoint": ["torchcde.solver.cdeint"],
    "cde_cdeint_linear_jump": ["torchcde.solver.cdeint"],
    "cde_cdeint_torchsde": ["torchcde.solver.cdeint"],
    "cde_model_cubic": ["torchcde.interpolation_cubic.CubicSpline.evaluate", "torchcde.solver.cdeint"],
}
