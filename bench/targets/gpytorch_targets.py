"""Verify targets: gpytorch 1.15.2 with linear_operator 0.6.1, Gaussian processes. Exact,
sparse (SGPR, KISS-GP), multitask and variational GPs: training losses (-mll), posterior
predictions in eval mode, lazily evaluated kernels, the multivariate normal, and
linear_operator's solves, log-determinants and decompositions (Cholesky, conjugate gradients,
Lanczos, pivoted Cholesky, Kronecker and Woodbury structure)."""

import torch

N, D, M = 24, 2, 8  # training points, input dimension, inducing points
TASKS = 2


def _exact_model(gpytorch, train_x, train_y, covar, likelihood=None, mean=None, multitask=False):
    """The ExactGP subclass every gpytorch tutorial writes."""

    class ExactGPModel(gpytorch.models.ExactGP):
        def __init__(self):
            super().__init__(train_x, train_y, likelihood or gpytorch.likelihoods.GaussianLikelihood())
            self.mean_module = mean or gpytorch.means.ConstantMean()
            self.covar_module = covar

        def forward(self, x):
            if multitask:
                return gpytorch.distributions.MultitaskMultivariateNormal(self.mean_module(x), self.covar_module(x))
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    return ExactGPModel()


def _approximate_model(gpytorch, inducing, make_strategy, distribution, mean=None):
    """The ApproximateGP subclass of the SVGP tutorial, with a chosen strategy and distribution."""

    class ApproximateGPModel(gpytorch.models.ApproximateGP):
        def __init__(self):
            super().__init__(make_strategy(self, inducing, distribution(inducing.size(-2))))
            self.mean_module = mean or gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.MaternKernel(nu=2.5))

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    return ApproximateGPModel()


def negative_mll(mll, x, y):
    """One training step's loss, as the gpytorch tutorials compute it: -mll(model(x), y)."""
    return -mll(mll.model(x), y).sum()


def predict(model, likelihood, x):
    """The tutorials' prediction: likelihood(model(x)) under fast_pred_var, then mean and variance."""
    import gpytorch

    with gpytorch.settings.fast_pred_var():
        predictive = likelihood(model(x))
        return predictive.mean, predictive.variance


def kernel_matrix(kernel, x1, x2):
    """A kernel evaluated (lazily) on two inputs, then made dense."""
    return kernel(x1, x2).to_dense()


def cg_inv_quad_logdet(matrix, rhs):
    """inv_quad_logdet as large GPs get it: conjugate gradients and stochastic Lanczos quadrature."""
    import linear_operator

    with linear_operator.settings.max_cholesky_size(0), linear_operator.settings.num_trace_samples(4):
        return linear_operator.inv_quad_logdet(matrix, rhs, logdet=True)


def lanczos_root(matrix, rhs):
    """A root decomposition by Lanczos (the matrix is above max_cholesky_size)."""
    import linear_operator

    with linear_operator.settings.max_cholesky_size(0):
        return linear_operator.root_decomposition(matrix).root.to_dense() @ rhs


def torchlint_targets():
    import gpytorch
    import linear_operator
    from linear_operator import operators as lo

    torch.manual_seed(0)
    kernels, var = gpytorch.kernels, gpytorch.variational
    train_x = torch.rand(N, D)
    train_y = torch.sin(train_x.sum(-1) * 3.0) + 0.1 * torch.randn(N)
    test_x = torch.rand(10, D)

    # Exact GP in training mode, with priors (the mll adds their log-probabilities).
    exact = _exact_model(gpytorch, train_x, train_y, kernels.ScaleKernel(
        kernels.RBFKernel(ard_num_dims=D, lengthscale_prior=gpytorch.priors.GammaPrior(3.0, 6.0)),
        outputscale_prior=gpytorch.priors.GammaPrior(2.0, 0.15)))
    exact.train()

    posterior = _exact_model(gpytorch, train_x, train_y, kernels.ScaleKernel(kernels.MaternKernel(nu=0.5)))
    posterior.eval()

    # SGPR: an inducing-point kernel on an exact GP.
    sgpr = _exact_model(gpytorch, train_x, train_y, kernels.ScaleKernel(kernels.InducingPointKernel(
        kernels.RBFKernel(), inducing_points=train_x[:M].clone(),
        likelihood=gpytorch.likelihoods.GaussianLikelihood())))
    sgpr.train()

    # KISS-GP on one input dimension: a grid-interpolation kernel.
    x1d = torch.linspace(0, 1, N).unsqueeze(-1)
    y1d = torch.sin(6 * x1d.squeeze(-1))
    ski = _exact_model(gpytorch, x1d, y1d, kernels.ScaleKernel(
        kernels.GridInterpolationKernel(kernels.RBFKernel(), grid_size=16, num_dims=1)))
    ski.train()

    # Multitask: Kronecker-structured covariance and a multitask likelihood.
    mt_y = torch.stack([train_y, -train_y], -1)
    multitask = _exact_model(
        gpytorch, train_x, mt_y, kernels.MultitaskKernel(kernels.RBFKernel(), num_tasks=TASKS, rank=1),
        likelihood=gpytorch.likelihoods.MultitaskGaussianLikelihood(num_tasks=TASKS),
        mean=gpytorch.means.MultitaskMean(gpytorch.means.ConstantMean(), num_tasks=TASKS), multitask=True)
    multitask.train()

    kernel_set = {
        "rbf_matern": kernels.RBFKernel() + kernels.ScaleKernel(kernels.MaternKernel(nu=1.5, ard_num_dims=D)),
        "periodic_rq": kernels.ScaleKernel(kernels.PeriodicKernel()) * kernels.RQKernel(),
        "spectral": kernels.SpectralMixtureKernel(num_mixtures=3, ard_num_dims=D),
        "piecewise_additive": kernels.AdditiveStructureKernel(kernels.PiecewisePolynomialKernel(q=2), num_dims=D),
        "rff": kernels.RFFKernel(num_samples=16),
    }

    inducing = torch.rand(M, D)
    unwhitened = _approximate_model(
        gpytorch, inducing, lambda m, z, d: var.UnwhitenedVariationalStrategy(m, z, d),
        var.MeanFieldVariationalDistribution)
    unwhitened.train()
    classifier = _approximate_model(
        gpytorch, inducing, lambda m, z, d: var.VariationalStrategy(m, z, d, learn_inducing_locations=True),
        var.NaturalVariationalDistribution, mean=gpytorch.means.LinearMean(D))
    classifier.train()
    labels = (train_y > 0).float()
    svgp = _approximate_model(
        gpytorch, inducing, lambda m, z, d: var.VariationalStrategy(m, z, d), var.CholeskyVariationalDistribution)
    svgp.eval()

    a = torch.randn(N, N)
    spd = a @ a.mT + N * torch.eye(N)
    rhs = torch.randn(N, 3)
    kron = lo.KroneckerProductLinearOperator(
        lo.DenseLinearOperator(spd[:4, :4]), lo.DenseLinearOperator(spd[4:10, 4:10]))
    low_rank = lo.LowRankRootAddedDiagLinearOperator(
        lo.LowRankRootLinearOperator(torch.randn(N, 3)), lo.DiagLinearOperator(torch.rand(N) + 0.5))
    mvn = gpytorch.distributions.MultivariateNormal(torch.zeros(N), lo.DenseLinearOperator(spd))
    mll = gpytorch.mlls
    return {
        # The model itself, in training mode (compiling it traces ExactGP.__call__).
        "gp_exact_forward": (exact, (train_x,)),
        # Training losses: a function computing -mll(model(x), y), as the tutorials' loop does.
        "gp_exact_mll_loss": (negative_mll, (mll.ExactMarginalLogLikelihood(exact.likelihood, exact),
                                             train_x, train_y)),
        "gp_sgpr_mll_loss": (negative_mll, (mll.ExactMarginalLogLikelihood(sgpr.likelihood, sgpr), train_x, train_y)),
        "gp_kissgp_mll_loss": (negative_mll, (mll.ExactMarginalLogLikelihood(ski.likelihood, ski), x1d, y1d)),
        "gp_multitask_mll_loss": (negative_mll, (mll.ExactMarginalLogLikelihood(multitask.likelihood, multitask),
                                                 train_x, mt_y)),
        "gp_unwhitened_pll_loss": (negative_mll, (mll.PredictiveLogLikelihood(
            gpytorch.likelihoods.GaussianLikelihood(), unwhitened, num_data=N), train_x, train_y)),
        "gp_classifier_elbo_loss": (negative_mll, (mll.VariationalELBO(
            gpytorch.likelihoods.BernoulliLikelihood(), classifier, num_data=N), train_x, labels)),
        # Posterior predictive distributions in eval mode.
        "gp_exact_predict": (predict, (posterior, posterior.likelihood, test_x)),
        "gp_svgp_predict": (predict, (svgp, gpytorch.likelihoods.GaussianLikelihood().eval(), test_x)),
        # Kernels evaluated on two inputs.
        **{f"gp_kernel_{name}": (kernel_matrix, (k, train_x, test_x)) for name, k in kernel_set.items()},
        "gp_mvn_log_prob": (mvn.log_prob, (train_y,)),
        "gp_mvn_rsample": (mvn.rsample, ()),
        # linear_operator on its own.
        "gp_lo_solve": (linear_operator.solve, (spd, rhs)),
        "gp_lo_inv_quad_logdet": (linear_operator.inv_quad_logdet, (spd, rhs), {"logdet": True}),
        "gp_lo_cg_inv_quad_logdet": (cg_inv_quad_logdet, (spd, rhs)),
        "gp_lo_lanczos_root": (lanczos_root, (spd, rhs)),
        "gp_lo_pivoted_cholesky": (linear_operator.pivoted_cholesky, (spd, 5)),
        "gp_lo_sqrt_inv_matmul": (linear_operator.sqrt_inv_matmul, (spd, rhs)),
        "gp_lo_kron_solve": (kron.solve, (torch.randn(24, 2),)),
        "gp_lo_kron_logdet": (kron.inv_quad_logdet, (torch.randn(24, 2), True)),
        "gp_lo_woodbury_solve": (low_rank.solve, (rhs,)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting. The models'
# own forward methods are the tutorials' code (in this file): compiling a gpytorch model starts at
# ExactGP.__call__ / ApproximateGP.__call__, which run the prediction strategy and then forward;
# the loss and prediction functions above call the model, the mll and the likelihood.
COMPILES = {
    "gp_exact_forward": [
        "gpytorch.models.exact_gp.ExactGP.__call__",
    ],
    "gp_exact_mll_loss": [
        "gpytorch.models.exact_gp.ExactGP.__call__",
        "gpytorch.mlls.exact_marginal_log_likelihood.ExactMarginalLogLikelihood.forward",
    ],
    "gp_sgpr_mll_loss": [
        "gpytorch.models.exact_gp.ExactGP.__call__",
        "gpytorch.mlls.exact_marginal_log_likelihood.ExactMarginalLogLikelihood.forward",
    ],
    "gp_kissgp_mll_loss": [
        "gpytorch.models.exact_gp.ExactGP.__call__",
        "gpytorch.mlls.exact_marginal_log_likelihood.ExactMarginalLogLikelihood.forward",
    ],
    "gp_multitask_mll_loss": [
        "gpytorch.models.exact_gp.ExactGP.__call__",
        "gpytorch.mlls.exact_marginal_log_likelihood.ExactMarginalLogLikelihood.forward",
    ],
    "gp_unwhitened_pll_loss": [
        "gpytorch.models.approximate_gp.ApproximateGP.__call__",
        "gpytorch.mlls.predictive_log_likelihood.PredictiveLogLikelihood.forward",
    ],
    "gp_classifier_elbo_loss": [
        "gpytorch.models.approximate_gp.ApproximateGP.__call__",
        "gpytorch.mlls.variational_elbo.VariationalELBO.forward",
    ],
    "gp_exact_predict": [
        "gpytorch.models.exact_gp.ExactGP.__call__",
        "gpytorch.likelihoods.likelihood._Likelihood.__call__",
    ],
    "gp_svgp_predict": [
        "gpytorch.models.approximate_gp.ApproximateGP.__call__",
        "gpytorch.likelihoods.likelihood._Likelihood.__call__",
    ],
    "gp_kernel_rbf_matern": [
        "gpytorch.kernels.kernel.Kernel.__call__",
        "gpytorch.lazy.lazy_evaluated_kernel_tensor.LazyEvaluatedKernelTensor.to_dense",
    ],
    "gp_kernel_periodic_rq": [
        "gpytorch.kernels.kernel.Kernel.__call__",
        "gpytorch.lazy.lazy_evaluated_kernel_tensor.LazyEvaluatedKernelTensor.to_dense",
    ],
    "gp_kernel_spectral": [
        "gpytorch.kernels.kernel.Kernel.__call__",
        "gpytorch.lazy.lazy_evaluated_kernel_tensor.LazyEvaluatedKernelTensor.to_dense",
    ],
    "gp_kernel_piecewise_additive": [
        "gpytorch.kernels.kernel.Kernel.__call__",
        "gpytorch.lazy.lazy_evaluated_kernel_tensor.LazyEvaluatedKernelTensor.to_dense",
    ],
    "gp_kernel_rff": [
        "gpytorch.kernels.kernel.Kernel.__call__",
        "gpytorch.lazy.lazy_evaluated_kernel_tensor.LazyEvaluatedKernelTensor.to_dense",
    ],
    "gp_mvn_log_prob": [
        "gpytorch.distributions.multivariate_normal.MultivariateNormal.log_prob",
    ],
    "gp_mvn_rsample": [
        "gpytorch.distributions.multivariate_normal.MultivariateNormal.rsample",
    ],
    "gp_lo_solve": [
        "linear_operator.functions.solve",
    ],
    "gp_lo_inv_quad_logdet": [
        "linear_operator.functions.inv_quad_logdet",
    ],
    "gp_lo_cg_inv_quad_logdet": [
        "linear_operator.functions.inv_quad_logdet",
    ],
    "gp_lo_lanczos_root": [
        "linear_operator.functions.root_decomposition",
    ],
    "gp_lo_pivoted_cholesky": [
        "linear_operator.functions.pivoted_cholesky",
    ],
    "gp_lo_sqrt_inv_matmul": [
        "linear_operator.functions.sqrt_inv_matmul",
    ],
    "gp_lo_kron_solve": [
        "linear_operator.operators._linear_operator.LinearOperator.solve",
    ],
    "gp_lo_kron_logdet": [
        "linear_operator.operators.kronecker_product_linear_operator.KroneckerProductLinearOperator.inv_quad_logdet",
    ],
    "gp_lo_woodbury_solve": [
        "linear_operator.operators.low_rank_root_added_diag_linear_operator.LowRankRootAddedDiagLinearOperator.solve",
    ],
}
