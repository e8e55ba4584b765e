"""Verify targets: pytorch-tabnet 4.1.0, tabular deep learning. The TabNet network (the nn.Module
that TabNetClassifier trains) with categorical embeddings, feature groups and sparsemax or entmax
attention: eval forward, a supervised training step's loss (ghost batch norm, sparsity
regularisation, SMOTE batch augmentations), explain masks (forward_masks), multi-task heads, the self-supervised
TabNetPretraining network and its loss, and the sparsemax/entmax functions themselves."""

import torch

BATCH, FEATURES = 16, 6
CAT_IDXS, CAT_DIMS = [0, 3], [4, 5]
SMALL = dict(n_d=8, n_a=8, n_steps=2, n_independent=1, n_shared=1, virtual_batch_size=8)


def _rows():
    """A batch of rows: columns 0 and 3 categorical codes, the rest numeric."""
    x = torch.randn(BATCH, FEATURES)
    x[:, 0] = torch.randint(0, CAT_DIMS[0], (BATCH,)).float()
    x[:, 3] = torch.randint(0, CAT_DIMS[1], (BATCH,)).float()
    return x


def supervised_loss(network, x, y, lambda_sparse=1e-3):
    """TabModel's training step loss: cross-entropy minus lambda_sparse times the sparsity loss."""
    output, m_loss = network(x)
    return torch.nn.functional.cross_entropy(output, y) - lambda_sparse * m_loss


def pretraining_loss(network, x):
    """TabNetPretrainer's training step: reconstruct the obfuscated features."""
    from pytorch_tabnet.metrics import UnsupervisedLoss

    output, embedded_x, obf_vars = network(x)
    return UnsupervisedLoss(output, embedded_x, obf_vars)


def torchlint_targets():
    import numpy as np
    from pytorch_tabnet import augmentations, sparsemax, tab_network
    from pytorch_tabnet.utils import create_group_matrix

    torch.manual_seed(0)
    np.random.seed(0)
    x = _rows()
    y = torch.randint(0, 3, (BATCH,))
    no_groups = create_group_matrix([], FEATURES)
    groups = create_group_matrix([[1, 2], [4, 5]], FEATURES)

    def tabnet(output_dim=3, **kwargs):
        return tab_network.TabNet(FEATURES, output_dim, cat_idxs=CAT_IDXS, cat_dims=CAT_DIMS, cat_emb_dim=[2, 3],
                                  **{**SMALL, "group_attention_matrix": no_groups, **kwargs})

    def pretraining(**kwargs):
        return tab_network.TabNetPretraining(FEATURES, cat_idxs=CAT_IDXS, cat_dims=CAT_DIMS, cat_emb_dim=[2, 3],
                                             **{**SMALL, "group_attention_matrix": groups, **kwargs})

    scores = torch.randn(BATCH, 7)
    return {
        "tabnet_forward": (tabnet().eval(), (x,)),
        "tabnet_entmax_groups_forward": (tabnet(mask_type="entmax", group_attention_matrix=groups).eval(), (x,)),
        "tabnet_multitask_forward": (tabnet(output_dim=[2, 3]).eval(), (x,)),
        "tabnet_numeric_forward": (tab_network.TabNet(
            FEATURES, 1, **SMALL, group_attention_matrix=no_groups).eval(), (torch.randn(BATCH, FEATURES),)),
        # A training step's loss, deliberately in training mode (ghost batch norm, sparsity loss).
        "tabnet_train_loss": (supervised_loss, (tabnet().train(), x, y)),
        "tabnet_explain_masks": (tabnet().eval().forward_masks, (x,)),
        "tabnet_entmax_explain_masks": (tabnet(mask_type="entmax").eval().forward_masks, (x,)),
        "tabnet_pretraining_forward": (pretraining().eval(), (x,)),
        # The self-supervised step, in training mode (random obfuscation of feature groups).
        "tabnet_pretraining_loss": (pretraining_loss, (pretraining().train(), x)),
        "tabnet_pretraining_masks": (pretraining(mask_type="entmax").eval().forward_masks, (x,)),
        # The batch augmentations TabModel applies inside its training step.
        "tabnet_regression_smote": (augmentations.RegressionSMOTE(device_name="cpu", p=0.5).__call__,
                                    (x[:, 1:3].clone(), torch.randn(BATCH, 1))),
        "tabnet_classification_smote": (augmentations.ClassificationSMOTE(device_name="cpu", p=0.5).__call__,
                                        (x.clone(), y)),
        "tabnet_sparsemax": (sparsemax.sparsemax, (scores, -1)),
        "tabnet_entmax15": (sparsemax.entmax15, (scores, -1)),
        "tabnet_entmoid15": (sparsemax.entmoid15, (scores,)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting. The
# sparsemax/entmax functions are autograd Functions' `apply`; their forward is the library code.
COMPILES = {
    "tabnet_forward": ["pytorch_tabnet.tab_network.TabNet.forward"],
    "tabnet_entmax_groups_forward": ["pytorch_tabnet.tab_network.TabNet.forward"],
    "tabnet_multitask_forward": ["pytorch_tabnet.tab_network.TabNet.forward"],
    "tabnet_numeric_forward": ["pytorch_tabnet.tab_network.TabNet.forward"],
    "tabnet_train_loss": ["pytorch_tabnet.tab_network.TabNet.forward"],
    "tabnet_explain_masks": ["pytorch_tabnet.tab_network.TabNet.forward_masks"],
    "tabnet_entmax_explain_masks": ["pytorch_tabnet.tab_network.TabNet.forward_masks"],
    "tabnet_pretraining_forward": ["pytorch_tabnet.tab_network.TabNetPretraining.forward"],
    "tabnet_pretraining_loss": [
        "pytorch_tabnet.tab_network.TabNetPretraining.forward", "pytorch_tabnet.metrics.UnsupervisedLoss"],
    "tabnet_pretraining_masks": ["pytorch_tabnet.tab_network.TabNetPretraining.forward_masks"],
    "tabnet_regression_smote": ["pytorch_tabnet.augmentations.RegressionSMOTE.__call__"],
    "tabnet_classification_smote": ["pytorch_tabnet.augmentations.ClassificationSMOTE.__call__"],
    "tabnet_sparsemax": ["pytorch_tabnet.sparsemax.SparsemaxFunction.forward"],
    "tabnet_entmax15": ["pytorch_tabnet.sparsemax.Entmax15Function.forward"],
    "tabnet_entmoid15": ["pytorch_tabnet.sparsemax.Entmoid15.forward"],
}
