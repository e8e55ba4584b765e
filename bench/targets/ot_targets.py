"""Verify targets: POT (pot) 0.9.7.post1, optimal transport on torch tensors through its torch backend.
Cost matrices, Sinkhorn in its variants (log-domain, stabilized, warm-started, Greenkhorn, empirical divergence),
unbalanced and partial transport, exact EMD and 1-D/circle Wasserstein, sliced Wasserstein, Bures and GMM
distances, Sinkhorn and convolutional barycenters, (fused, entropic) Gromov-Wasserstein, batched and
low-rank solvers, and the unified `ot.solve` / `ot.solve_sample`."""

import random

import numpy as np
import torch


NS, NT, DIM = 8, 6, 2
# Few iterations keep each solve (and its trace) small; the solvers check convergence every 10.
ITERS = {"numItermax": 20}


def torchlint_targets():
    import ot

    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    xs = torch.randn(NS, DIM, dtype=torch.float64)
    xt = torch.randn(NT, DIM, dtype=torch.float64) + 1.0
    a = torch.full((NS,), 1.0 / NS, dtype=torch.float64)
    b = torch.full((NT,), 1.0 / NT, dtype=torch.float64)
    M = ot.dist(xs, xt)
    M = M / M.max()
    # Three histograms on a 1-D grid, for barycenters.
    grid = torch.arange(10, dtype=torch.float64)
    hists = torch.stack([torch.exp(-(grid - c) ** 2 / 4) for c in (2.0, 5.0, 7.0)], dim=1)
    hists = hists / hists.sum(0)
    M_grid = ot.dist(grid.reshape(-1, 1), grid.reshape(-1, 1))
    M_grid = M_grid / M_grid.max()
    C1 = ot.dist(xs, xs)
    C2 = ot.dist(xt, xt)
    u = torch.rand(NS, dtype=torch.float64)
    v = torch.rand(NT, dtype=torch.float64)
    reg = 0.1
    # Two Gaussian mixtures, a batch of cost matrices, and three 8x8 images.
    mu_s, mu_t = torch.randn(2, DIM, dtype=torch.float64), torch.randn(3, DIM, dtype=torch.float64)
    cov_s = torch.eye(DIM, dtype=torch.float64).expand(2, DIM, DIM) * 0.5
    cov_t = torch.eye(DIM, dtype=torch.float64).expand(3, DIM, DIM) * 1.5
    w_s = torch.tensor([0.4, 0.6], dtype=torch.float64)
    w_t = torch.full((3,), 1.0 / 3, dtype=torch.float64)
    M_batch = torch.rand(2, NS, NT, dtype=torch.float64)
    images = torch.rand(3, 8, 8, dtype=torch.float64)
    images = images / images.sum(dim=(1, 2), keepdim=True)
    return {
        # Cost matrices.
        "ot_dist_sqeuclidean": (ot.dist, (xs, xt)),
        "ot_dist_euclidean": (ot.dist, (xs, xt), {"metric": "euclidean"}),
        # Entropic OT.
        "ot_sinkhorn": (ot.sinkhorn, (a, b, M, reg), ITERS),
        "ot_sinkhorn_log": (ot.sinkhorn, (a, b, M, reg), {"method": "sinkhorn_log", **ITERS}),
        "ot_sinkhorn_stabilized": (ot.sinkhorn, (a, b, M, reg), {"method": "sinkhorn_stabilized", **ITERS}),
        "ot_sinkhorn_warmstart_log": (ot.sinkhorn, (a, b, M, reg), {
            "log": True, "warmstart": (torch.zeros(NS, dtype=torch.float64), torch.zeros(NT, dtype=torch.float64)),
            **ITERS}),
        "ot_greenkhorn": (ot.bregman.greenkhorn, (a, b, M, reg), {"numItermax": 10}),
        "ot_sinkhorn2_log": (ot.sinkhorn2, (a, b, M, reg), {"log": True, **ITERS}),
        "ot_empirical_sinkhorn_divergence": (ot.bregman.empirical_sinkhorn_divergence, (xs, xt, 0.5),
                                             {"a": a, "b": b, "numIterMax": 20}),
        # Unbalanced and partial transport.
        "ot_sinkhorn_unbalanced": (ot.unbalanced.sinkhorn_unbalanced, (a, b, M, reg, 1.0), ITERS),
        "ot_sinkhorn_unbalanced_stabilized": (ot.unbalanced.sinkhorn_unbalanced2, (a, b, M, reg, 1.0),
                                              {"method": "sinkhorn_stabilized", **ITERS}),
        "ot_sinkhorn_unbalanced_translation_invariant": (ot.unbalanced.sinkhorn_unbalanced, (a, b, M, reg, 1.0),
                                                         {"method": "sinkhorn_translation_invariant", **ITERS}),
        "ot_sinkhorn_unbalanced_entropy_c": (ot.unbalanced.sinkhorn_unbalanced, (a, b, M, reg, (1.0, 2.0)), {
            "reg_type": "entropy", "c": torch.outer(a, b), "log": True, **ITERS}),
        "ot_barycenter_unbalanced": (ot.unbalanced.barycenter_unbalanced, (hists, M_grid, 0.1, 1.0), ITERS),
        "ot_mm_unbalanced": (ot.unbalanced.mm_unbalanced, (a, b, M, 1.0), {"div": "kl", "numItermax": 10}),
        "ot_entropic_partial": (ot.partial.entropic_partial_wasserstein, (a, b, M, reg), {"m": 0.5, "numItermax": 10}),
        # Exact and 1-D transport.
        "ot_emd2": (ot.emd2, (a, b, M)),
        "ot_emd": (ot.emd, (a, b, M), {"log": True}),
        "ot_emd2_1d": (ot.emd2_1d, (xs[:, 0], xt[:, 0], a, b)),
        "ot_wasserstein_1d": (ot.wasserstein_1d, (xs[:, 0], xt[:, 0], a, b), {"p": 2}),
        "ot_wasserstein_circle": (ot.wasserstein_circle, (u, v), {"p": 1}),
        # Sliced and Gaussian distances.
        "ot_sliced_wasserstein": (ot.sliced_wasserstein_distance, (xs, xt, a, b), {"n_projections": 20, "seed": 0}),
        "ot_max_sliced_wasserstein": (ot.max_sliced_wasserstein_distance, (xs, xt), {"n_projections": 20, "seed": 0}),
        "ot_bures_wasserstein": (ot.gaussian.empirical_bures_wasserstein_distance, (xs, xt)),
        "ot_gmm_ot_loss": (ot.gmm.gmm_ot_loss, (mu_s, mu_t, cov_s, cov_t, w_s, w_t)),
        # Barycenters, Gromov-Wasserstein, low rank, and the unified solver.
        "ot_barycenter_sinkhorn": (ot.bregman.barycenter, (hists, M_grid, 0.1), ITERS),
        "ot_barycenter_stabilized": (ot.bregman.barycenter, (hists, M_grid, 0.1),
                                     {"method": "sinkhorn_stabilized", **ITERS}),
        "ot_entropic_gromov": (ot.gromov.entropic_gromov_wasserstein, (C1, C2, a, b),
                               {"epsilon": 0.5, "max_iter": 5, "solver": "PGD", **ITERS}),
        "ot_convolutional_barycenter2d": (ot.bregman.convolutional_barycenter2d, (images, 0.05), {"numItermax": 10}),
        "ot_entropic_fused_gromov": (ot.gromov.entropic_fused_gromov_wasserstein, (M, C1, C2, a, b),
                                     {"epsilon": 0.5, "alpha": 0.5, "max_iter": 5, **ITERS}),
        "ot_gromov_wasserstein": (ot.gromov.gromov_wasserstein, (C1, C2, a, b), {"max_iter": 5}),
        "ot_solve_batch": (ot.batch.solve_batch, (M_batch,), {"reg": 0.1, "max_iter": 10}),
        "ot_lowrank_sinkhorn": (ot.lowrank.lowrank_sinkhorn, (xs, xt, a, b),
                                {"reg": 0.1, "rank": 2, "numItermax": 10}),
        "ot_solve_entropic": (ot.solve, (M, a, b), {"reg": reg, "max_iter": 20}),
        "ot_solve_exact": (ot.solve, (M, a, b)),
        "ot_solve_sample_unbalanced": (ot.solve_sample, (xs, xt, a, b), {"reg": reg, "unbalanced": 1.0, "max_iter": 20}),
        "ot_solve_unbalanced_l2": (ot.solve, (M, a, b), {"reg": reg, "unbalanced": 1.0, "unbalanced_type": "L2",
                                                          "max_iter": 10}),
    }


COMPILES = {
    "ot_dist_sqeuclidean": ["ot.utils.dist"],
    "ot_dist_euclidean": ["ot.utils.dist"],
    "ot_sinkhorn": ["ot.bregman._sinkhorn.sinkhorn"],
    "ot_sinkhorn_log": ["ot.bregman._sinkhorn.sinkhorn"],
    "ot_sinkhorn_stabilized": ["ot.bregman._sinkhorn.sinkhorn"],
    "ot_sinkhorn_warmstart_log": ["ot.bregman._sinkhorn.sinkhorn"],
    "ot_greenkhorn": ["ot.bregman._sinkhorn.greenkhorn"],
    "ot_sinkhorn2_log": ["ot.bregman._sinkhorn.sinkhorn2"],
    "ot_empirical_sinkhorn_divergence": ["ot.bregman._empirical.empirical_sinkhorn_divergence"],
    "ot_sinkhorn_unbalanced": ["ot.unbalanced._sinkhorn.sinkhorn_unbalanced"],
    "ot_sinkhorn_unbalanced_stabilized": ["ot.unbalanced._sinkhorn.sinkhorn_unbalanced2"],
    "ot_sinkhorn_unbalanced_translation_invariant": ["ot.unbalanced._sinkhorn.sinkhorn_unbalanced"],
    "ot_sinkhorn_unbalanced_entropy_c": ["ot.unbalanced._sinkhorn.sinkhorn_unbalanced"],
    "ot_barycenter_unbalanced": ["ot.unbalanced._sinkhorn.barycenter_unbalanced"],
    "ot_mm_unbalanced": ["ot.unbalanced._mm.mm_unbalanced"],
    "ot_entropic_partial": ["ot.partial.partial_solvers.entropic_partial_wasserstein"],
    "ot_emd2": ["ot.lp._network_simplex.emd2"],
    "ot_emd": ["ot.lp._network_simplex.emd"],
    "ot_emd2_1d": ["ot.lp.solver_1d.emd2_1d"],
    "ot_wasserstein_1d": ["ot.lp.solver_1d.wasserstein_1d"],
    "ot_wasserstein_circle": ["ot.lp.solver_circle.wasserstein_circle"],
    "ot_sliced_wasserstein": ["ot.sliced._sliced_distances.sliced_wasserstein_distance"],
    "ot_max_sliced_wasserstein": ["ot.sliced._sliced_distances.max_sliced_wasserstein_distance"],
    "ot_bures_wasserstein": ["ot.gaussian.empirical_bures_wasserstein_distance"],
    "ot_gmm_ot_loss": ["ot.gmm.gmm_ot_loss"],
    "ot_barycenter_sinkhorn": ["ot.bregman._barycenter.barycenter"],
    "ot_barycenter_stabilized": ["ot.bregman._barycenter.barycenter"],
    "ot_entropic_gromov": ["ot.gromov._bregman.entropic_gromov_wasserstein"],
    "ot_convolutional_barycenter2d": ["ot.bregman._convolutional.convolutional_barycenter2d"],
    "ot_entropic_fused_gromov": ["ot.gromov._bregman.entropic_fused_gromov_wasserstein"],
    "ot_gromov_wasserstein": ["ot.gromov._gw.gromov_wasserstein"],
    "ot_solve_batch": ["ot.batch._linear.solve_batch"],
    "ot_lowrank_sinkhorn": ["ot.lowrank.lowrank_sinkhorn"],
    "ot_solve_entropic": ["ot.solvers._linear.solve"],
    "ot_solve_exact": ["ot.solvers._linear.solve"],
    "ot_solve_sample_unbalanced": ["ot.solvers._linear.solve_sample"],
    "ot_solve_unbalanced_l2": ["ot.solvers._linear.solve"],
}
