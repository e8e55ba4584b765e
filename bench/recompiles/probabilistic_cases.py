"""Recompile cases from pyro 1.9.2 and gpytorch 1.15.2: the libraries' own statistics and
kernels, compiled and called once per MCMC diagnostic, per posterior query or per training step,
with the number of samples or points, and the requested probability, changing.
"""

import torch

CALLS = 10


def pyro_hpdi_probability():
    """`pyro.ops.stats.hpdi(samples, prob)` with prob from 0.5 up by 0.05 (a Python float)."""
    from pyro.ops.stats import hpdi

    for index in range(CALLS):
        yield hpdi, (torch.randn(200, 3), 0.5 + 0.05 * index)


def pyro_quantile_probabilities():
    """`pyro.ops.stats.quantile(samples, probs)` with a list of 1..10 probabilities."""
    from pyro.ops.stats import quantile

    for count in range(1, CALLS + 1):
        yield quantile, (torch.randn(200, 3), [0.05 * (i + 1) for i in range(count)])


def pyro_autocorrelation_growing_chain():
    """`pyro.ops.stats.autocorrelation` of a chain that grows by 50 samples per call."""
    from pyro.ops.stats import autocorrelation

    for index in range(CALLS):
        yield autocorrelation, (torch.randn(100 + 50 * index),)


def pyro_effective_sample_size_growing():
    """`pyro.ops.stats.effective_sample_size` of two chains growing by 20 samples per call."""
    from pyro.ops.stats import effective_sample_size

    for index in range(CALLS):
        yield effective_sample_size, (torch.randn(2, 60 + 20 * index),)


def pyro_resample_count():
    """`pyro.ops.stats.resample(samples, num_samples)` with num_samples 10..19."""
    from pyro.ops.stats import resample

    for index in range(CALLS):
        yield resample, (torch.randn(100, 3), 10 + index)


def _rbf():
    import gpytorch

    return gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())


def gp_kernel_growing_points():
    """A gpytorch `ScaleKernel(RBFKernel())`'s `forward` on 5..14 training points."""
    kernel = _rbf()
    forward = kernel.forward
    for points in range(5, 5 + CALLS):
        x = torch.randn(points, 2)
        yield forward, (x, x)


def gp_kernel_changing_lengthscale():
    """The RBF kernel's `forward` after each optimizer step changed its lengthscale parameter."""
    kernel = _rbf()
    forward = kernel.forward
    x = torch.randn(8, 2)
    for index in range(CALLS):
        with torch.no_grad():
            kernel.base_kernel.lengthscale = 0.5 + 0.1 * index
        yield forward, (x, x)


def torchlint_targets():
    return {
        "pyro_hpdi_probability": pyro_hpdi_probability(),
        "pyro_quantile_probabilities": pyro_quantile_probabilities(),
        "pyro_autocorrelation_growing_chain": pyro_autocorrelation_growing_chain(),
        "pyro_effective_sample_size_growing": pyro_effective_sample_size_growing(),
        "pyro_resample_count": pyro_resample_count(),
        "gp_kernel_growing_points": gp_kernel_growing_points(),
        "gp_kernel_changing_lengthscale": gp_kernel_changing_lengthscale(),
    }
