"""Verify targets: nflows 0.14, normalizing flows. Flows built as the README builds them
(masked autoregressive, rational-quadratic and other spline couplings, linear and normalizing
layers, image squeeze and 1x1 convolutions, SimpleRealNVP, MaskedAutoregressiveFlow), run
through log_prob, sample, sample_and_log_prob and transform_to_noise; and the MADE mixture of
Gaussians."""

import torch

FEATURES, CONTEXT, BATCH = 4, 2, 8
HIDDEN = 16


def _net(nflows, context=None):
    """A coupling layer's conditioner, as nflows's examples make it."""

    def create(in_features, out_features):
        return nflows.nn.nets.ResidualNet(in_features, out_features, hidden_features=HIDDEN,
                                          context_features=context, num_blocks=1)

    return create


def torchlint_targets():
    import nflows
    import nflows.nn.nets
    from nflows import distributions, flows, transforms as T

    torch.manual_seed(0)
    x = torch.randn(BATCH, FEATURES)
    c = torch.randn(BATCH, CONTEXT)
    mask = torch.tensor([1, 0, 1, 0])

    def flow(layers, base=None):
        return flows.Flow(T.CompositeTransform(layers), base or distributions.StandardNormal([FEATURES])).eval()

    maf = flow([
        T.MaskedAffineAutoregressiveTransform(features=FEATURES, hidden_features=HIDDEN, context_features=CONTEXT),
        T.RandomPermutation(FEATURES),
        T.MaskedAffineAutoregressiveTransform(features=FEATURES, hidden_features=HIDDEN, context_features=CONTEXT,
                                              use_residual_blocks=False, random_mask=True),
        T.ReversePermutation(FEATURES),
    ], distributions.ConditionalDiagonalNormal([FEATURES], context_encoder=torch.nn.Linear(CONTEXT, 2 * FEATURES)))
    rq_coupling = flow([
        T.PiecewiseRationalQuadraticCouplingTransform(mask, _net(nflows, CONTEXT), num_bins=4, tails="linear",
                                                      tail_bound=3.0),
        T.LULinear(FEATURES, identity_init=False),
        T.PiecewiseRationalQuadraticCouplingTransform(1 - mask, _net(nflows, CONTEXT), num_bins=4, tails="linear",
                                                      tail_bound=3.0, apply_unconditional_transform=True),
    ])
    rq_autoregressive = flow([
        T.MaskedPiecewiseRationalQuadraticAutoregressiveTransform(
            features=FEATURES, hidden_features=HIDDEN, context_features=CONTEXT, num_bins=4, tails="linear",
            tail_bound=3.0),
        T.ReversePermutation(FEATURES),
        T.MaskedPiecewiseQuadraticAutoregressiveTransform(
            features=FEATURES, hidden_features=HIDDEN, context_features=CONTEXT, num_bins=4, tails="linear",
            tail_bound=3.0),
    ])
    # Splines on the unit interval between a sigmoid and a logit, then additive/affine couplings.
    def unit_couplings():
        return [
            T.Sigmoid(),
            T.PiecewiseLinearCouplingTransform(mask, _net(nflows), num_bins=4),
            T.PiecewiseQuadraticCouplingTransform(1 - mask, _net(nflows), num_bins=4),
            T.PiecewiseCubicCouplingTransform(mask, _net(nflows), num_bins=4),
        ]

    unit_splines = flow([
        *unit_couplings(),
        T.MaskedPiecewiseLinearAutoregressiveTransform(num_bins=4, features=FEATURES, hidden_features=HIDDEN),
        T.MaskedPiecewiseCubicAutoregressiveTransform(num_bins=4, features=FEATURES, hidden_features=HIDDEN),
        T.Logit(),
        T.AdditiveCouplingTransform(mask, _net(nflows)),
        T.AffineCouplingTransform(1 - mask, _net(nflows)),
    ])
    # Sampling inverts every layer; autoregressive layers invert one feature at a time, so the
    # sampled flow keeps the couplings only.
    unit_coupling_flow = flow([*unit_couplings(), T.Logit(), T.AffineCouplingTransform(1 - mask, _net(nflows))])
    linear_layers = flow([
        T.ActNorm(FEATURES),
        T.BatchNorm(FEATURES),
        T.QRLinear(FEATURES, num_householder=2),
        T.SVDLinear(FEATURES, num_householder=2),
        T.NaiveLinear(FEATURES),
        T.HouseholderSequence(FEATURES, num_transforms=2),
        T.PointwiseAffineTransform(shift=0.5, scale=2.0),
        T.LeakyReLU(),
        T.LogTanh(cut_point=2),
        T.Tanh(),
        T.PiecewiseRationalQuadraticCDF([FEATURES], num_bins=4, tails="linear", tail_bound=1.0),
    ])
    image = flows.Flow(T.CompositeTransform([
        T.SqueezeTransform(),
        T.OneByOneConvolution(4),
        T.AffineCouplingTransform(torch.tensor([1, 1, 0, 0]), lambda i, o: nflows.nn.nets.ConvResidualNet(
            i, o, hidden_channels=8, num_blocks=1)),
    ]), distributions.StandardNormal([4, 2, 2])).eval()
    realnvp = flows.SimpleRealNVP(features=FEATURES, hidden_features=HIDDEN, num_layers=2,
                                  num_blocks_per_layer=1).eval()
    maf_flow = flows.MaskedAutoregressiveFlow(features=FEATURES, hidden_features=HIDDEN, num_layers=2,
                                              num_blocks_per_layer=1, batch_norm_between_layers=True).eval()
    mog = distributions.MADEMoG(features=FEATURES, hidden_features=HIDDEN, context_features=CONTEXT,
                                num_mixture_components=3).eval()
    return {
        # The transform module itself: forward maps data to noise.
        "nf_maf_transform_forward": (maf._transform, (x,), {"context": c}),
        "nf_maf_log_prob": (maf.log_prob, (x,), {"context": c}),
        "nf_maf_sample": (maf.sample, (3,), {"context": c}),
        "nf_maf_transform_to_noise": (maf.transform_to_noise, (x,), {"context": c}),
        "nf_rq_coupling_log_prob": (rq_coupling.log_prob, (x,), {"context": c}),
        "nf_rq_coupling_sample_and_log_prob": (rq_coupling.sample_and_log_prob, (2,), {"context": c}),
        "nf_rq_autoregressive_log_prob": (rq_autoregressive.log_prob, (x,), {"context": c}),
        "nf_rq_autoregressive_sample": (rq_autoregressive.sample, (2,), {"context": c[:2]}),
        "nf_unit_splines_log_prob": (unit_splines.log_prob, (x,)),
        "nf_unit_couplings_sample": (unit_coupling_flow.sample, (BATCH,)),
        "nf_linear_layers_log_prob": (linear_layers.log_prob, (x.tanh(),)),
        "nf_image_log_prob": (image.log_prob, (torch.randn(BATCH, 1, 4, 4),)),
        "nf_realnvp_log_prob": (realnvp.log_prob, (x,)),
        "nf_realnvp_sample": (realnvp.sample, (BATCH,)),
        "nf_maf_flow_log_prob": (maf_flow.log_prob, (x,)),
        "nf_made_mog_log_prob": (mog.log_prob, (x,), {"context": c}),
        "nf_made_mog_sample": (mog.sample, (2,), {"context": c[:2]}),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# public Distribution / Flow methods (Flow subclasses inherit log_prob and sample from
# nflows.distributions.base.Distribution, which call the flow's _log_prob and _sample).
COMPILES = {
    "nf_maf_transform_forward": ["nflows.transforms.base.CompositeTransform.forward"],
    "nf_maf_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_maf_sample": ["nflows.distributions.base.Distribution.sample"],
    "nf_maf_transform_to_noise": ["nflows.flows.base.Flow.transform_to_noise"],
    "nf_rq_coupling_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_rq_coupling_sample_and_log_prob": ["nflows.flows.base.Flow.sample_and_log_prob"],
    "nf_rq_autoregressive_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_rq_autoregressive_sample": ["nflows.distributions.base.Distribution.sample"],
    "nf_unit_splines_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_unit_couplings_sample": ["nflows.distributions.base.Distribution.sample"],
    "nf_linear_layers_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_image_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_realnvp_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_realnvp_sample": ["nflows.distributions.base.Distribution.sample"],
    "nf_maf_flow_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_made_mog_log_prob": ["nflows.distributions.base.Distribution.log_prob"],
    "nf_made_mog_sample": ["nflows.distributions.base.Distribution.sample"],
}
