"""Verify targets: zuko 1.6.0, normalizing flows. Unconditional and conditional flows of every
family (MAF, NSF, NCSF, RealNVP, NICE, GF, NAF, UNAF, SOSPF, BPF, CNF, GMM): the training loss
-flow(c).log_prob(x), sampling with rsample, rsample_and_log_prob, and a Bayesian network's
reparameterized loss."""

import torch

FEATURES, CONTEXT, BATCH = 3, 2, 8
HIDDEN = dict(hidden_features=(16, 16))


def nll(flow, x, c=None):
    """The README's training loss: -flow(c).log_prob(x).mean()."""
    return -flow(c).log_prob(x).mean()


def sample(flow, c=None):
    """Reparameterized samples from the flow, one per context (or 4 without one)."""
    return flow(c).rsample(() if c is not None else (4,))


def sample_and_log_prob(flow, c):
    return flow(c).rsample_and_log_prob()


def bayesian_loss(bayes, x, c):
    """A Bayesian flow's loss as zuko's docs write it: the reparameterized model's NLL plus KL."""
    with bayes.reparameterize(local_trick=True) as flow:
        loss = -flow(c).log_prob(x).mean()
    return loss + bayes.kl_divergence() / 100


def torchlint_targets():
    import zuko
    import zuko.bayesian

    torch.manual_seed(0)
    flows = zuko.flows
    x = torch.randn(BATCH, FEATURES)
    c = torch.randn(BATCH, CONTEXT)

    def conditional(cls, **kwargs):
        return cls(FEATURES, CONTEXT, **kwargs).eval()

    def unconditional(cls, **kwargs):
        return cls(FEATURES, **kwargs).eval()

    neural = dict(transforms=1, signal=4, network=dict(hidden_features=(8,)))

    # A chain of zuko's own transforms, applied forward and inverted (with log-determinants).
    T, D = zuko.transforms, torch.distributions
    bins = 4
    chain = T.ComposedTransform(
        T.LULinearTransform(torch.randn(FEATURES, FEATURES) / 4),
        T.RotationTransform(torch.randn(FEATURES, FEATURES) / 4),
        T.PermutationTransform(torch.randperm(FEATURES)),
        T.MonotonicRQSTransform(torch.randn(FEATURES, bins), torch.randn(FEATURES, bins),
                                torch.randn(FEATURES, bins - 1)),
        T.SignedPowerTransform(torch.randn(FEATURES) / 4),
        T.SoftclipTransform(4.0),
    )
    normal = D.Normal(torch.zeros(FEATURES), torch.ones(FEATURES))
    distributions = {
        "joint": zuko.distributions.Joint(D.Uniform(0.0, 1.0), D.Normal(0.0, 1.0), D.Exponential(1.0)),
        "mixture": zuko.distributions.Mixture(
            zuko.distributions.DiagNormal(torch.randn(3, FEATURES), torch.rand(3, FEATURES) + 0.5), torch.randn(3)),
        "generalized_normal": zuko.distributions.GeneralizedNormal(torch.full((FEATURES,), 1.5)),
        "truncated": zuko.distributions.Truncated(normal, -1.0, 2.0),
        "sort": zuko.distributions.Sort(D.Normal(0.0, 1.0), n=FEATURES),
        "topk": zuko.distributions.TopK(D.Normal(0.0, 1.0), k=2, n=4),
        "maximum": zuko.distributions.Maximum(D.Normal(0.0, 1.0), n=3),
    }
    ordered = x.abs().sort(-1).values
    samples = {"joint": x.sigmoid(), "mixture": x, "generalized_normal": x, "truncated": x.clamp(-0.9, 1.9),
               "sort": ordered, "topk": ordered[..., :2], "maximum": x[..., 0]}

    return {
        # The flow module itself: forward(c) builds the conditional distribution.
        "zuko_maf_forward": (conditional(flows.MAF, transforms=2, **HIDDEN), (c,)),
        # Training losses.
        "zuko_maf_nll": (nll, (conditional(flows.MAF, transforms=2, **HIDDEN), x, c)),
        "zuko_nsf_nll": (nll, (conditional(flows.NSF, bins=4, transforms=2, **HIDDEN), x, c)),
        "zuko_ncsf_nll": (nll, (unconditional(flows.NCSF, bins=4, transforms=2, **HIDDEN), x.remainder(3.0))),
        "zuko_realnvp_nll": (nll, (conditional(flows.RealNVP, transforms=2, **HIDDEN), x, c)),
        "zuko_nice_nll": (nll, (unconditional(flows.NICE, transforms=2, **HIDDEN), x)),
        "zuko_gf_nll": (nll, (conditional(flows.GF, transforms=2, components=4, **HIDDEN), x, c)),
        "zuko_naf_nll": (nll, (conditional(flows.NAF, **neural), x, c)),
        "zuko_unaf_nll": (nll, (conditional(flows.UNAF, **neural), x, c)),
        "zuko_sospf_nll": (nll, (conditional(flows.SOSPF, transforms=1, degree=2, polynomials=2, **HIDDEN), x, c)),
        "zuko_bpf_nll": (nll, (conditional(flows.BPF, transforms=1, degree=4, **HIDDEN), x, c)),
        "zuko_cnf_nll": (nll, (conditional(flows.CNF, hidden_features=(16,), exact=False, atol=1e-4, rtol=1e-3), x, c)),
        "zuko_gmm_nll": (nll, (conditional(zuko.mixtures.GMM, components=3, **HIDDEN), x, c)),
        # Sampling (inverse transforms).
        "zuko_maf_sample": (sample, (conditional(flows.MAF, transforms=2, **HIDDEN), c)),
        "zuko_nsf_sample": (sample, (unconditional(flows.NSF, bins=4, transforms=2, **HIDDEN),)),
        "zuko_realnvp_sample_log_prob": (sample_and_log_prob, (conditional(flows.RealNVP, transforms=2, **HIDDEN), c)),
        # zuko's transforms and distributions on their own.
        "zuko_transform_call_and_ladj": (chain.call_and_ladj, (x,)),
        "zuko_transform_inverse": (chain.inv.call_and_ladj, (x.tanh() * 3,)),
        **{f"zuko_{name}_log_prob": (d.log_prob, (samples[name],)) for name, d in distributions.items()},
        "zuko_truncated_rsample": (distributions["truncated"].rsample, ((BATCH,),)),
        "zuko_generalized_normal_rsample": (distributions["generalized_normal"].rsample, ((BATCH,),)),
        "zuko_joint_rsample": (distributions["joint"].rsample, ((BATCH,),)),
        "zuko_sort_sample": (distributions["sort"].sample, ((BATCH,),)),
        "zuko_bayesian_loss": (bayesian_loss, (zuko.bayesian.BayesianModel(
            conditional(flows.MAF, transforms=1, **HIDDEN)), x, c)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: for the
# loss and sampling functions, the flow's forward (which builds the distribution) and the
# distribution method they call.
COMPILES = {
    "zuko_maf_forward": ["zuko.lazy.Flow.forward"],
    "zuko_maf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_nsf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_ncsf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_realnvp_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_nice_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_gf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_naf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_unaf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_sospf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_bpf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_cnf_nll": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.log_prob"],
    "zuko_gmm_nll": ["zuko.mixtures.GMM.forward", "zuko.distributions.Mixture.log_prob"],
    "zuko_maf_sample": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.rsample"],
    "zuko_nsf_sample": ["zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.rsample"],
    "zuko_realnvp_sample_log_prob": [
        "zuko.lazy.Flow.forward", "zuko.distributions.NormalizingFlow.rsample_and_log_prob"],
    "zuko_transform_call_and_ladj": ["zuko.transforms.ComposedTransform.call_and_ladj"],
    "zuko_transform_inverse": ["zuko.transforms.ComposedTransform.call_and_ladj"],
    "zuko_joint_log_prob": ["zuko.distributions.Joint.log_prob"],
    "zuko_mixture_log_prob": ["zuko.distributions.Mixture.log_prob"],
    "zuko_generalized_normal_log_prob": ["zuko.distributions.GeneralizedNormal.log_prob"],
    "zuko_truncated_log_prob": ["zuko.distributions.Truncated.log_prob"],
    "zuko_sort_log_prob": ["zuko.distributions.Sort.log_prob"],
    "zuko_topk_log_prob": ["zuko.distributions.TopK.log_prob"],
    "zuko_maximum_log_prob": ["zuko.distributions.Minimum.log_prob"],
    "zuko_truncated_rsample": ["zuko.distributions.Truncated.rsample"],
    "zuko_generalized_normal_rsample": ["zuko.distributions.GeneralizedNormal.rsample"],
    "zuko_joint_rsample": ["zuko.distributions.Joint.rsample"],
    "zuko_sort_sample": ["zuko.distributions.Sort.sample"],
    "zuko_bayesian_loss": [
        "zuko.bayesian.BayesianModel.reparameterize", "zuko.lazy.Flow.forward",
        "zuko.distributions.NormalizingFlow.log_prob", "zuko.bayesian.BayesianModel.kl_divergence"],
}
