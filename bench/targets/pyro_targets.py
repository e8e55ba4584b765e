"""Verify targets: pyro-ppl 1.9.2, probabilistic programming. `log_prob`/`rsample` of Pyro's own distributions
(zero-inflated, conjugate, heavy-tailed, directional, mixtures, hidden Markov models) and of normalizing flows
built from its transforms; ELBO losses (Trace, mean-field, Renyi), SVI training steps, importance sampling, HMC/NUTS
kernel steps, autoguides, a Bayesian PyroModule, Gaussian processes (pyro.contrib.gp), poutine traces and
infer_discrete on small models; and pyro.ops (tensor utilities, statistics, special functions,
Welford, the HMC integrator, Newton steps)."""

import torch


N, D, K, T = 12, 3, 3, 5


def regression_model(x, y=None):
    import pyro
    import pyro.distributions as dist

    w = pyro.sample("w", dist.Normal(torch.zeros(D), 1.0).to_event(1))
    b = pyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = pyro.sample("sigma", dist.LogNormal(0.0, 1.0))
    with pyro.plate("data", x.shape[0]):
        return pyro.sample("obs", dist.Normal(x @ w + b, sigma), obs=y)


def regression_guide(x, y=None):
    import pyro
    import pyro.distributions as dist
    from pyro.distributions import constraints

    w_loc = pyro.param("guide_w_loc", torch.zeros(D))
    w_scale = pyro.param("guide_w_scale", torch.ones(D), constraint=constraints.positive)
    b_loc = pyro.param("guide_b_loc", torch.tensor(0.0))
    pyro.sample("w", dist.Normal(w_loc, w_scale).to_event(1))
    pyro.sample("b", dist.Normal(b_loc, 1.0))
    pyro.sample("sigma", dist.LogNormal(pyro.param("guide_sigma_loc", torch.tensor(0.0)), 0.5))


def mixture_model(data):
    """A Gaussian mixture whose discrete assignments are enumerated in parallel, for infer_discrete."""
    import pyro
    import pyro.distributions as dist

    weights = pyro.sample("weights", dist.Dirichlet(torch.ones(K)))
    locs = pyro.sample("locs", dist.Normal(torch.zeros(K), 5.0).to_event(1))
    with pyro.plate("points", data.shape[0]):
        z = pyro.sample("z", dist.Categorical(weights), infer={"enumerate": "parallel"})
        pyro.sample("x", dist.Normal(locs[z], 1.0), obs=data)


def mixture_guide(data):
    import pyro
    import pyro.distributions as dist
    from pyro.distributions import constraints

    conc = pyro.param("mix_conc", torch.ones(K), constraint=constraints.positive)
    loc = pyro.param("mix_locs", torch.tensor([-2.0, 0.0, 2.0]))
    pyro.sample("weights", dist.Dirichlet(conc))
    pyro.sample("locs", dist.Delta(loc).to_event(1))


def coin_model(y):
    """A one-parameter model for the MCMC kernels."""
    import pyro
    import pyro.distributions as dist

    mu = pyro.sample("mu", dist.Normal(0.0, 1.0))
    with pyro.plate("obs_plate", y.shape[0]):
        pyro.sample("obs", dist.Normal(mu, 1.0), obs=y)


def _potential(z):
    # The potential energy of a standard normal, as HMC's integrator sees it.
    return 0.5 * sum((v ** 2).sum() for v in z.values())


def _kinetic_grad(r):
    return {k: v for k, v in r.items()}


def _quadratic(x):
    return ((x - 1.0) ** 2).sum() + (x[0] * x[1]) ** 2


def torchlint_targets():
    import pyro
    import pyro.distributions as dist
    import pyro.distributions.transforms as T_
    import pyro.ops.special
    import pyro.ops.stats
    import pyro.ops.tensor_utils
    import pyro.contrib.gp as gp
    from pyro.infer import (SVI, Importance, RenyiELBO, Trace_ELBO, TraceGraph_ELBO, TraceMeanField_ELBO,
                            infer_discrete)
    from pyro.infer.autoguide import AutoDelta, AutoDiagonalNormal, AutoLowRankMultivariateNormal, AutoNormal
    from pyro.infer.mcmc import HMC, NUTS
    from pyro.nn import PyroModule, PyroSample
    from pyro.optim import Adam, ClippedAdam
    from pyro.ops.integrator import velocity_verlet
    from pyro.ops.newton import newton_step
    from pyro.ops.welford import WelfordCovariance

    pyro.set_rng_seed(0)
    pyro.clear_param_store()
    torch.manual_seed(0)

    # --- Distributions.
    counts = torch.tensor([0.0, 0.0, 1.0, 3.0, 0.0, 7.0])
    x_real = torch.randn(6)
    zip_ = dist.ZeroInflatedPoisson(rate=torch.full((6,), 2.0), gate=torch.full((6,), 0.3))
    zinb = dist.ZeroInflatedNegativeBinomial(total_count=torch.tensor(5.0), logits=torch.zeros(6),
                                             gate_logits=torch.zeros(6))
    beta_binom = dist.BetaBinomial(torch.full((6,), 2.0), torch.full((6,), 3.0), total_count=10)
    dir_mult = dist.DirichletMultinomial(torch.ones(2, 4), total_count=6)
    stable = dist.Stable(torch.tensor(1.5), torch.tensor(0.3))
    projected = dist.ProjectedNormal(torch.randn(4, 3))
    mvt = dist.MultivariateStudentT(torch.tensor(4.0), torch.zeros(3), torch.eye(3) + 0.1)
    sine_bvm = dist.SineBivariateVonMises(torch.tensor([0.1]), torch.tensor([0.2]), torch.tensor([1.0]),
                                          torch.tensor([1.5]), torch.tensor([0.3]))
    mix_diag = dist.MixtureOfDiagNormals(torch.randn(K, 2), torch.rand(K, 2) + 0.5, torch.zeros(K))
    asym = dist.SoftAsymmetricLaplace(torch.zeros(6), torch.ones(6), asymmetry=2.0)
    lnnb = dist.LogNormalNegativeBinomial(total_count=5.0, logits=torch.zeros(6), multiplicative_noise_scale=0.5,
                                          num_quad_points=4)
    polya = dist.TruncatedPolyaGamma(prototype=torch.ones(1))
    gauss_hmm = dist.GaussianHMM(
        dist.Normal(torch.zeros(2), 1.0).to_event(1), torch.eye(2) * 0.9,
        dist.Normal(torch.zeros(2), 0.5).to_event(1), torch.randn(2, 3),
        dist.Normal(torch.zeros(3), 1.0).to_event(1), duration=T)
    discrete_hmm = dist.DiscreteHMM(torch.zeros(K), torch.randn(K, K),
                                    dist.Normal(torch.randn(K), 1.0))

    # --- Normalizing flows.
    flow_spline = dist.TransformedDistribution(
        dist.Normal(torch.zeros(2), torch.ones(2)),
        [T_.spline(2, count_bins=4), T_.permute(2), T_.affine_autoregressive(2, hidden_dims=[8])])
    flow_planar = dist.TransformedDistribution(
        dist.Normal(torch.zeros(3), torch.ones(3)),
        [T_.planar(3), T_.radial(3), T_.householder(3, count_transforms=2), T_.sylvester(3, count_transforms=2)])
    flow_naf = dist.TransformedDistribution(
        dist.Normal(torch.zeros(3), torch.ones(3)),
        [T_.neural_autoregressive(3, hidden_dims=[8], width=4), T_.block_autoregressive(3),
         T_.polynomial(3, hidden_dims=[8]), T_.matrix_exponential(3)])
    for flow in (flow_spline, flow_planar, flow_naf):
        for t in flow.transforms:
            if isinstance(t, torch.nn.Module):
                t.eval()

    # --- Inference on small models.
    x = torch.randn(N, D)
    y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3 * torch.randn(N)
    data = torch.cat([torch.randn(4) - 2.0, torch.randn(4) + 2.0])
    auto_normal = AutoNormal(regression_model)
    auto_diag = AutoDiagonalNormal(regression_model)
    auto_lowrank = AutoLowRankMultivariateNormal(regression_model, rank=2)
    auto_delta = AutoDelta(regression_model)
    for guide in (auto_normal, auto_diag, auto_lowrank, auto_delta):
        guide(x, y)  # creates the guide's parameters, as the first SVI step would
    regression_guide(x, y)
    mixture_guide(data)
    # One SVI step is the training step users compile: loss, backward, and the optimizer update.
    svi = SVI(regression_model, regression_guide, Adam({"lr": 0.01}), Trace_ELBO())
    svi_graph = SVI(regression_model, regression_guide, ClippedAdam({"lr": 0.01}), TraceGraph_ELBO())
    importance = Importance(regression_model, regression_guide, num_samples=3)
    hmc = HMC(coin_model, step_size=0.1, num_steps=3, adapt_step_size=False)
    hmc.setup(0, y)
    nuts = NUTS(coin_model, step_size=0.1, adapt_step_size=False, max_tree_depth=2)
    nuts.setup(0, y)
    # A Bayesian linear layer: PyroModule samples its weights from their priors on each call.
    bayes_linear = PyroModule[torch.nn.Linear](D, 2)
    bayes_linear.weight = PyroSample(dist.Normal(0.0, 1.0).expand([2, D]).to_event(2))
    bayes_linear.bias = PyroSample(dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    # Gaussian processes (pyro.contrib.gp).
    rbf = gp.kernels.RBF(input_dim=D, variance=torch.tensor(1.5), lengthscale=torch.tensor(0.8))
    kernel_sum = gp.kernels.Sum(gp.kernels.Matern52(D), gp.kernels.Periodic(D))
    gpr = gp.models.GPRegression(x, y, gp.kernels.RBF(D), noise=torch.tensor(0.1)).eval()
    sgpr = gp.models.SparseGPRegression(x, y, gp.kernels.RBF(D), Xu=x[:4].clone(), approx="VFE").eval()
    vsgp = gp.models.VariationalSparseGP(x, (y > 0).float(), gp.kernels.RBF(D), Xu=x[:4].clone(),
                                         likelihood=gp.likelihoods.Binary()).eval()
    tracer = pyro.poutine.trace(pyro.poutine.condition(regression_model, data={"b": torch.tensor(0.1)}))
    discrete = infer_discrete(pyro.poutine.replay(mixture_model, trace=pyro.poutine.trace(mixture_guide)
                                                  .get_trace(data)), first_available_dim=-2)

    # --- pyro.ops.
    chains = torch.randn(2, 40)
    welford = WelfordCovariance(diagonal=False)
    welford.update(torch.randn(3))
    z = {"a": torch.randn(3), "b": torch.randn(2)}
    r = {"a": torch.randn(3), "b": torch.randn(2)}
    x_newton = torch.tensor([0.5, -0.5], requires_grad=True)

    return {
        # Distributions: log densities and reparametrized samples.
        "pyro_zip_log_prob": (zip_.log_prob, (counts,)),
        "pyro_zinb_log_prob": (zinb.log_prob, (counts,)),
        "pyro_beta_binomial_log_prob": (beta_binom.log_prob, (counts,)),
        "pyro_dirichlet_multinomial_log_prob": (dir_mult.log_prob, (torch.tensor([[1.0, 2.0, 3.0, 0.0],
                                                                                   [0.0, 0.0, 6.0, 0.0]]),)),
        "pyro_stable_rsample": (stable.rsample, (torch.Size([8]),)),
        "pyro_stable_log_prob": (stable.log_prob, (x_real,)),
        "pyro_projected_normal_rsample": (projected.rsample, (torch.Size([2]),)),
        "pyro_projected_normal_log_prob": (projected.log_prob, (torch.nn.functional.normalize(torch.randn(4, 3), dim=-1),)),
        "pyro_mvt_log_prob": (mvt.log_prob, (torch.randn(5, 3),)),
        "pyro_sine_bvm_log_prob": (sine_bvm.log_prob, (torch.rand(4, 2) * 2 - 1,)),
        "pyro_mix_diag_normals_rsample": (mix_diag.rsample, (torch.Size([5]),)),
        "pyro_mix_diag_normals_log_prob": (mix_diag.log_prob, (torch.randn(5, 2),)),
        "pyro_soft_asym_laplace_log_prob": (asym.log_prob, (x_real,)),
        "pyro_lnnb_log_prob": (lnnb.log_prob, (counts,)),
        "pyro_polya_gamma_log_prob": (polya.log_prob, (torch.tensor([0.2, 0.5, 1.0]),)),
        "pyro_gaussian_hmm_log_prob": (gauss_hmm.log_prob, (torch.randn(T, 3),)),
        "pyro_gaussian_hmm_filter": (gauss_hmm.filter, (torch.randn(T, 3),)),
        "pyro_discrete_hmm_log_prob": (discrete_hmm.log_prob, (torch.randn(T),)),
        "pyro_flow_spline_log_prob": (flow_spline.log_prob, (torch.randn(4, 2),)),
        "pyro_flow_planar_rsample": (flow_planar.rsample, (torch.Size([4]),)),
        "pyro_flow_naf_rsample": (flow_naf.rsample, (torch.Size([4]),)),
        # ELBO losses: what a training step compiles (the loss, before backward).
        "pyro_trace_elbo": (Trace_ELBO().differentiable_loss, (regression_model, regression_guide, x, y)),
        "pyro_meanfield_elbo": (TraceMeanField_ELBO().differentiable_loss, (regression_model, auto_normal, x, y)),
        "pyro_renyi_elbo": (RenyiELBO(alpha=0.5, num_particles=2).loss, (regression_model, regression_guide, x, y)),
        "pyro_svi_step": (svi.step, (x, y)),
        "pyro_svi_tracegraph_step": (svi_graph.step, (x, y)),
        # Autoguides and prediction.
        "pyro_autonormal": (auto_normal, (x, y)),
        "pyro_autodiagonalnormal": (auto_diag, (x, y)),
        "pyro_autolowrank_mvn": (auto_lowrank, (x, y)),
        "pyro_autodelta": (auto_delta, (x, y)),
        "pyro_importance": (importance.run, (x, y)),
        "pyro_hmc_sample": (hmc.sample, ({"mu": torch.tensor(0.1)},)),
        "pyro_nuts_sample": (nuts.sample, ({"mu": torch.tensor(0.1)},)),
        "pyro_bayesian_linear": (bayes_linear, (x,)),
        "pyro_gp_rbf": (rbf, (x, x[:4])),
        "pyro_gp_kernel_sum": (kernel_sum, (x,)),
        "pyro_gpr_predict": (gpr, (x[:5],), {"full_cov": True}),
        "pyro_sgpr_predict": (sgpr, (x[:5],)),
        "pyro_vsgp_predict": (vsgp, (x[:5],)),
        "pyro_vsgp_elbo": (Trace_ELBO().differentiable_loss, (vsgp.model, vsgp.guide)),
        "pyro_poutine_trace": (tracer.get_trace, (x, y)),
        "pyro_infer_discrete": (discrete, (data,)),
        # pyro.ops.
        "pyro_ops_convolve": (pyro.ops.tensor_utils.convolve, (torch.randn(20), torch.randn(5)), {"mode": "same"}),
        "pyro_ops_dct": (pyro.ops.tensor_utils.dct, (torch.randn(3, 8),)),
        "pyro_ops_periodic_repeat": (pyro.ops.tensor_utils.periodic_repeat, (torch.randn(4, 3), 10, 0)),
        "pyro_ops_ess": (pyro.ops.stats.effective_sample_size, (chains,)),
        "pyro_ops_hpdi": (pyro.ops.stats.hpdi, (torch.randn(50, 2), 0.9)),
        "pyro_ops_crps": (pyro.ops.stats.crps_empirical, (torch.randn(10, 3), torch.randn(3))),
        "pyro_ops_log_beta": (pyro.ops.special.log_beta, (torch.rand(5) * 10 + 1, torch.rand(5) * 10 + 1),
                              {"tol": 0.1}),
        "pyro_ops_log_i1": (pyro.ops.special.log_I1, (2, torch.rand(4) * 3), {"terms": 50}),
        "pyro_ops_welford_update": (welford.update, (torch.randn(3),)),
        "pyro_ops_velocity_verlet": (velocity_verlet, (z, r, _potential, _kinetic_grad, 0.1), {"num_steps": 2}),
        "pyro_ops_newton_step": (newton_step, (_quadratic(x_newton), x_newton, 1.0)),
    }


COMPILES = {
    "pyro_zip_log_prob": ["pyro.distributions.zero_inflated.ZeroInflatedDistribution.log_prob"],
    "pyro_zinb_log_prob": ["pyro.distributions.zero_inflated.ZeroInflatedDistribution.log_prob"],
    "pyro_beta_binomial_log_prob": ["pyro.distributions.conjugate.BetaBinomial.log_prob"],
    "pyro_dirichlet_multinomial_log_prob": ["pyro.distributions.conjugate.DirichletMultinomial.log_prob"],
    "pyro_stable_rsample": ["pyro.distributions.stable.Stable.rsample"],
    "pyro_stable_log_prob": ["pyro.distributions.stable.Stable.log_prob"],
    "pyro_projected_normal_rsample": ["pyro.distributions.projected_normal.ProjectedNormal.rsample"],
    "pyro_projected_normal_log_prob": ["pyro.distributions.projected_normal.ProjectedNormal.log_prob"],
    "pyro_mvt_log_prob": ["pyro.distributions.multivariate_studentt.MultivariateStudentT.log_prob"],
    "pyro_sine_bvm_log_prob": ["pyro.distributions.sine_bivariate_von_mises.SineBivariateVonMises.log_prob"],
    "pyro_mix_diag_normals_rsample": ["pyro.distributions.diag_normal_mixture.MixtureOfDiagNormals.rsample"],
    "pyro_mix_diag_normals_log_prob": ["pyro.distributions.diag_normal_mixture.MixtureOfDiagNormals.log_prob"],
    "pyro_soft_asym_laplace_log_prob": ["pyro.distributions.asymmetriclaplace.SoftAsymmetricLaplace.log_prob"],
    "pyro_lnnb_log_prob": ["pyro.distributions.log_normal_negative_binomial.LogNormalNegativeBinomial.log_prob"],
    "pyro_polya_gamma_log_prob": ["pyro.distributions.polya_gamma.TruncatedPolyaGamma.log_prob"],
    "pyro_gaussian_hmm_log_prob": ["pyro.distributions.hmm.GaussianHMM.log_prob"],
    "pyro_gaussian_hmm_filter": ["pyro.distributions.hmm.GaussianHMM.filter"],
    "pyro_discrete_hmm_log_prob": ["pyro.distributions.hmm.DiscreteHMM.log_prob"],
    "pyro_flow_spline_log_prob": ["torch.distributions.transformed_distribution.TransformedDistribution.log_prob"],
    "pyro_flow_planar_rsample": ["torch.distributions.transformed_distribution.TransformedDistribution.rsample"],
    "pyro_flow_naf_rsample": ["torch.distributions.transformed_distribution.TransformedDistribution.rsample"],
    "pyro_trace_elbo": ["pyro.infer.trace_elbo.Trace_ELBO.differentiable_loss"],
    "pyro_meanfield_elbo": ["pyro.infer.trace_elbo.Trace_ELBO.differentiable_loss"],
    "pyro_renyi_elbo": ["pyro.infer.renyi_elbo.RenyiELBO.loss"],
    "pyro_svi_step": ["pyro.infer.svi.SVI.step"],
    "pyro_svi_tracegraph_step": ["pyro.infer.svi.SVI.step"],
    "pyro_autonormal": ["pyro.infer.autoguide.guides.AutoNormal.forward"],
    "pyro_autodiagonalnormal": ["pyro.infer.autoguide.guides.AutoContinuous.forward"],
    "pyro_autolowrank_mvn": ["pyro.infer.autoguide.guides.AutoContinuous.forward"],
    "pyro_autodelta": ["pyro.infer.autoguide.guides.AutoDelta.forward"],
    "pyro_importance": ["pyro.infer.abstract_infer.TracePosterior.run"],
    "pyro_hmc_sample": ["pyro.infer.mcmc.hmc.HMC.sample"],
    "pyro_nuts_sample": ["pyro.infer.mcmc.nuts.NUTS.sample"],
    # PyroModule[nn.Linear] inherits Linear's forward; PyroModule's own __call__ is where tracing enters.
    "pyro_bayesian_linear": ["pyro.nn.module.PyroModule.__call__", "torch.nn.modules.linear.Linear.forward"],
    "pyro_gp_rbf": ["pyro.contrib.gp.kernels.isotropic.RBF.forward"],
    "pyro_gp_kernel_sum": ["pyro.contrib.gp.kernels.kernel.Sum.forward"],
    "pyro_gpr_predict": ["pyro.contrib.gp.models.gpr.GPRegression.forward"],
    "pyro_sgpr_predict": ["pyro.contrib.gp.models.sgpr.SparseGPRegression.forward"],
    "pyro_vsgp_predict": ["pyro.contrib.gp.models.vsgp.VariationalSparseGP.forward"],
    "pyro_vsgp_elbo": ["pyro.infer.trace_elbo.Trace_ELBO.differentiable_loss"],
    "pyro_poutine_trace": ["pyro.poutine.trace_messenger.TraceHandler.get_trace"],
    "pyro_infer_discrete": ["pyro.infer.discrete._sample_posterior"],
    "pyro_ops_convolve": ["pyro.ops.tensor_utils.convolve"],
    "pyro_ops_dct": ["pyro.ops.tensor_utils.dct"],
    "pyro_ops_periodic_repeat": ["pyro.ops.tensor_utils.periodic_repeat"],
    "pyro_ops_ess": ["pyro.ops.stats.effective_sample_size"],
    "pyro_ops_hpdi": ["pyro.ops.stats.hpdi"],
    "pyro_ops_crps": ["pyro.ops.stats.crps_empirical"],
    "pyro_ops_log_beta": ["pyro.ops.special.log_beta"],
    "pyro_ops_log_i1": ["pyro.ops.special.log_I1"],
    "pyro_ops_welford_update": ["pyro.ops.welford.WelfordCovariance.update"],
    "pyro_ops_velocity_verlet": ["pyro.ops.integrator.velocity_verlet"],
    "pyro_ops_newton_step": ["pyro.ops.newton.newton_step"],
}
