"""Verify targets: rtdl_revisiting_models 0.0.2, tabular deep learning. The paper's MLP, ResNet
and FT-Transformer (with categorical and continuous features, only continuous ones, ReLU
feed-forward blocks, Linformer key/value compression), in eval mode, plus an FT-Transformer
training step's loss."""

import torch

BATCH, N_CONT, CAT_CARDINALITIES = 8, 5, [3, 4]


def _ft_kwargs(**overrides):
    return {
        "n_blocks": 2, "d_block": 16, "attention_n_heads": 4, "attention_dropout": 0.1, "ffn_d_hidden": None,
        "ffn_d_hidden_multiplier": 4 / 3, "ffn_dropout": 0.1, "residual_dropout": 0.0, "d_out": 1, **overrides,
    }


def regression_loss(model, x_cont, x_cat, y):
    """The README's training step: MSE of the FT-Transformer's prediction (dropout active)."""
    return torch.nn.functional.mse_loss(model(x_cont, x_cat).squeeze(-1), y)


def torchlint_targets():
    import rtdl_revisiting_models as rtdl

    torch.manual_seed(0)
    x_cont = torch.randn(BATCH, N_CONT)
    x_cat = torch.stack([torch.randint(0, n, (BATCH,)) for n in CAT_CARDINALITIES], -1)
    y = torch.randn(BATCH)
    ft = rtdl.FTTransformer(n_cont_features=N_CONT, cat_cardinalities=CAT_CARDINALITIES, **_ft_kwargs())
    return {
        "rtdl_mlp": (rtdl.MLP(d_in=N_CONT, d_out=2, n_blocks=2, d_block=16, dropout=0.1).eval(), (x_cont,)),
        "rtdl_resnet": (rtdl.ResNet(d_in=N_CONT, d_out=2, n_blocks=2, d_block=16, d_hidden=None,
                                    d_hidden_multiplier=2.0, dropout1=0.1, dropout2=0.0).eval(), (x_cont,)),
        "rtdl_ft_transformer": (ft.eval(), (x_cont, x_cat)),
        "rtdl_ft_transformer_cont_only": (rtdl.FTTransformer(
            n_cont_features=N_CONT, cat_cardinalities=[], **_ft_kwargs(ffn_activation="ReLU",
                                                                       ffn_d_hidden_multiplier=2.0)).eval(),
            (x_cont, None)),
        "rtdl_ft_transformer_linformer": (rtdl.FTTransformer(
            n_cont_features=N_CONT, cat_cardinalities=CAT_CARDINALITIES,
            **_ft_kwargs(linformer_kv_compression_ratio=0.5, linformer_kv_compression_sharing="headwise")).eval(),
            (x_cont, x_cat)),
        "rtdl_ft_backbone": (rtdl.FTTransformerBackbone(**_ft_kwargs(d_out=3)).eval(), (torch.randn(BATCH, 4, 16),)),
        "rtdl_ft_transformer_train_loss": (regression_loss, (rtdl.FTTransformer(
            n_cont_features=N_CONT, cat_cardinalities=CAT_CARDINALITIES, **_ft_kwargs()).train(), x_cont, x_cat, y)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting.
COMPILES = {
    "rtdl_mlp": ["rtdl_revisiting_models.MLP.forward"],
    "rtdl_resnet": ["rtdl_revisiting_models.ResNet.forward"],
    "rtdl_ft_transformer": ["rtdl_revisiting_models.FTTransformer.forward"],
    "rtdl_ft_transformer_cont_only": ["rtdl_revisiting_models.FTTransformer.forward"],
    "rtdl_ft_transformer_linformer": ["rtdl_revisiting_models.FTTransformer.forward"],
    "rtdl_ft_backbone": ["rtdl_revisiting_models.FTTransformerBackbone.forward"],
    "rtdl_ft_transformer_train_loss": ["rtdl_revisiting_models.FTTransformer.forward"],
}
