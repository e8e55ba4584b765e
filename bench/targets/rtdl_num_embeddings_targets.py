"""Verify targets: rtdl_num_embeddings 0.0.12, embeddings for numerical features of tabular data.
Piecewise-linear encodings and embeddings over bins computed from data (quantile bins, and
decision-tree bins that give features different bin counts), periodic embeddings (full and lite,
with and without activation), and linear / linear-ReLU embeddings."""

import torch

BATCH, N_FEATURES = 8, 3


def torchlint_targets():
    import numpy as np
    import rtdl_num_embeddings as rne

    torch.manual_seed(0)
    np.random.seed(0)
    x_train = torch.randn(256, N_FEATURES)
    y_train = x_train[:, 0] * 2 + x_train[:, 1].sin() + 0.1 * torch.randn(256)
    quantile_bins = rne.compute_bins(x_train, n_bins=8)
    tree_bins = rne.compute_bins(x_train, n_bins=8, y=y_train, regression=True,
                                 tree_kwargs={"min_samples_leaf": 16, "min_impurity_decrease": 1e-4})
    x = torch.randn(BATCH, N_FEATURES)
    return {
        "rne_piecewise_linear_embeddings_b": (rne.PiecewiseLinearEmbeddings(
            quantile_bins, 8, activation=False, version="B").eval(), (x,)),
        "rne_piecewise_linear_embeddings_tree_a": (rne.PiecewiseLinearEmbeddings(
            tree_bins, 8, activation=True, version="A").eval(), (x,)),
        "rne_piecewise_linear_encoding": (rne.PiecewiseLinearEncoding(quantile_bins).eval(), (x,)),
        "rne_piecewise_linear_encoding_tree": (rne.PiecewiseLinearEncoding(tree_bins).eval(), (x,)),
        "rne_periodic_embeddings": (rne.PeriodicEmbeddings(N_FEATURES, 8, n_frequencies=4, lite=False).eval(), (x,)),
        "rne_periodic_embeddings_lite": (rne.PeriodicEmbeddings(
            N_FEATURES, 8, n_frequencies=4, lite=True).eval(), (x,)),
        "rne_periodic_linear_embeddings": (rne.PeriodicEmbeddings(
            N_FEATURES, 8, n_frequencies=4, activation=False, lite=False).eval(), (x,)),
        "rne_linear_relu_embeddings": (rne.LinearReLUEmbeddings(N_FEATURES, 8).eval(), (x,)),
        "rne_linear_embeddings": (rne.LinearEmbeddings(N_FEATURES, 8).eval(), (x,)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting.
COMPILES = {
    "rne_piecewise_linear_embeddings_b": ["rtdl_num_embeddings.PiecewiseLinearEmbeddings.forward"],
    "rne_piecewise_linear_embeddings_tree_a": ["rtdl_num_embeddings.PiecewiseLinearEmbeddings.forward"],
    "rne_piecewise_linear_encoding": ["rtdl_num_embeddings.PiecewiseLinearEncoding.forward"],
    "rne_piecewise_linear_encoding_tree": ["rtdl_num_embeddings.PiecewiseLinearEncoding.forward"],
    "rne_periodic_embeddings": ["rtdl_num_embeddings.PeriodicEmbeddings.forward"],
    "rne_periodic_embeddings_lite": ["rtdl_num_embeddings.PeriodicEmbeddings.forward"],
    "rne_periodic_linear_embeddings": ["rtdl_num_embeddings.PeriodicEmbeddings.forward"],
    "rne_linear_relu_embeddings": ["rtdl_num_embeddings.LinearReLUEmbeddings.forward"],
    "rne_linear_embeddings": ["rtdl_num_embeddings.LinearEmbeddings.forward"],
}
