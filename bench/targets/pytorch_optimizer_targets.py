"""Verify targets: pytorch_optimizer 4.1.0, optimizers. `optimizer.step` compiled for a spread of
optimizers (sign-based, Adam variants, rectified, layer-wise trust ratio, distance-adaptive,
schedule-free, second-order preconditioners, orthogonalised), each after one backward pass on a tiny
model done outside the compiled call; a few of its segmentation/classification losses and an LR
scheduler's step."""

import torch
from torch import nn


X = None  # set in torchlint_targets, after the seed


def _step(optimizer_class, groups=None, **options):
    """The bound `step` of an optimizer over a tiny model whose gradients are already there.

    ``groups(model)`` gives the parameter groups, where the optimizer wants them split."""
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    model(X).pow(2).mean().backward()
    params = groups(model) if groups else model.parameters()
    return optimizer_class(params, **options).step


def _muon_groups(model):
    # As Muon's docs show: matrices orthogonalised, biases through its AdamW branch.
    return [dict(params=[p for p in model.parameters() if p.ndim >= 2], use_muon=True),
            dict(params=[p for p in model.parameters() if p.ndim < 2], lr=3e-4, use_muon=False)]


def torchlint_targets():
    global X
    import pytorch_optimizer.optimizer as po
    from pytorch_optimizer import loss as pl
    from pytorch_optimizer.optimizer.agc import agc
    from pytorch_optimizer.optimizer.grokfast import gradfilter_ema
    from pytorch_optimizer.optimizer.utils.gradient import clip_grad_norm
    from pytorch_optimizer.lr_scheduler.cosine_anealing import CosineAnnealingWarmupRestarts

    torch.manual_seed(0)
    X = torch.randn(5, 4)

    sf = _step(po.ScheduleFreeAdamW, lr=1e-3, warmup_steps=2)
    sf.__self__.train()  # schedule-free optimizers step in train mode

    grad_model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    grad_model(X).pow(2).mean().backward()

    model = nn.Linear(4, 3)
    scheduler = CosineAnnealingWarmupRestarts(torch.optim.SGD(model.parameters(), lr=0.1),
                                              first_cycle_steps=10, max_lr=0.1, min_lr=1e-4, warmup_steps=3)

    logits = torch.randn(2, 3, 4, 4, requires_grad=True)  # segmentation logits (N, C, H, W)
    labels = torch.randint(0, 3, (2, 4, 4))
    binary_logits = torch.randn(2, 1, 4, 4, requires_grad=True)
    binary_masks = torch.randint(0, 2, (2, 1, 4, 4)).float()
    class_logits = torch.randn(6, 3, requires_grad=True)
    classes = torch.tensor([0, 2, 1, 1, 0, 2])
    return {
        # -- optimizer.step ----------------------------------------------------------------------
        "po_lion": (_step(po.Lion, lr=1e-4, weight_decay=1e-2, use_gc=True), ()),
        "po_adabelief": (_step(po.AdaBelief, lr=1e-3, rectify=True, weight_decouple=True), ()),
        "po_ranger": (_step(po.Ranger, lr=1e-3), ()),
        "po_lamb": (_step(po.Lamb, lr=1e-3, weight_decay=1e-2, grad_averaging=True), ()),
        "po_adan": (_step(po.Adan, lr=1e-3, max_grad_norm=1.0, weight_decay=1e-2), ()),
        "po_madgrad": (_step(po.MADGRAD, lr=1e-3, weight_decay=1e-3), ()),
        "po_adamp": (_step(po.AdamP, lr=1e-3, nesterov=True), ()),
        "po_diffgrad": (_step(po.DiffGrad, lr=1e-3), ()),
        "po_yogi": (_step(po.Yogi, lr=1e-2), ()),
        "po_novograd": (_step(po.NovoGrad, lr=1e-3, grad_averaging=True), ()),
        "po_adabound": (_step(po.AdaBound, lr=1e-3, final_lr=0.1, ams_bound=True), ()),
        "po_prodigy": (_step(po.Prodigy, lr=1.0), ()),
        "po_dadapt_adam": (_step(po.DAdaptAdam, lr=1.0), ()),
        "po_schedulefree_adamw": (sf, ()),
        "po_tiger": (_step(po.Tiger, lr=1e-3), ()),
        "po_lars": (_step(po.LARS, lr=1e-2, weight_decay=1e-4, nesterov=True), ()),
        "po_sm3": (_step(po.SM3, lr=0.1, momentum=0.5), ()),
        "po_shampoo": (_step(po.Shampoo, lr=1e-3, preconditioning_compute_steps=1), ()),
        "po_soap": (_step(po.SOAP, lr=3e-3, precondition_frequency=1), ()),
        "po_muon": (_step(po.Muon, _muon_groups, lr=0.02), ()),
        "po_came": (_step(po.CAME, lr=2e-4), ()),
        "po_adafactor": (_step(po.AdaFactor, lr=1e-3), ()),
        "po_ademamix": (_step(po.AdEMAMix, lr=1e-3, t_alpha_beta3=10), ()),
        "po_adopt": (_step(po.ADOPT, lr=1e-3), ()),
        "po_ranger21": (_step(po.Ranger21, num_iterations=20, lr=1e-3), ()),
        "po_kron": (_step(po.Kron, lr=1e-3), ()),
        "po_stable_adamw": (_step(po.StableAdamW, lr=1e-3), ()),
        "po_nero": (_step(po.Nero, lr=1e-2), ()),
        "po_swats": (_step(po.SWATS, lr=1e-3), ()),
        "po_adai": (_step(po.Adai, lr=1e-3), ()),
        "po_mars": (_step(po.MARS, lr=3e-3), ()),
        "po_adamg": (_step(po.AdamG), ()),
        "po_alice": (_step(po.Alice), ()),
        "po_avagrad": (_step(po.AvaGrad), ()),
        "po_magma": (_step(po.Magma), ()),
        "po_sgdp": (_step(po.SGDP, lr=1e-2, nesterov=True), ()),
        "po_spam": (_step(po.SPAM), ()),
        "po_stable_spam": (_step(po.StableSPAM), ()),
        "po_lookahead_adamw": (po.Lookahead(_step(torch.optim.AdamW, lr=1e-3).__self__, k=2, alpha=0.5).step, ()),
        # -- gradient utilities, called between backward and step -----------------------------------
        "po_clip_grad_norm": (clip_grad_norm, (list(grad_model.parameters()),)),
        "po_gradfilter_ema": (gradfilter_ema, (grad_model,), {"alpha": 0.9}),
        "po_agc": (agc, (grad_model[0].weight, grad_model[0].weight.grad), {"agc_clip_val": 1e-3}),
        # -- losses and a scheduler ----------------------------------------------------------------
        "po_dice_loss": (pl.DiceLoss(mode="multiclass", classes=[1, 2], log_loss=True), (logits, labels)),
        "po_jaccard_loss": (pl.JaccardLoss(mode="binary"), (binary_logits, binary_masks)),
        "po_lovasz_hinge_loss": (pl.LovaszHingeLoss(per_image=True), (binary_logits[:, 0], binary_masks[:, 0])),
        "po_focal_tversky_loss": (pl.FocalTverskyLoss(gamma=1.5), (binary_logits, binary_masks)),
        "po_bi_tempered_loss": (pl.BiTemperedLogisticLoss(t1=0.8, t2=1.4, label_smooth=0.1), (class_logits, classes)),
        "po_ldam_loss": (pl.LDAMLoss(num_class_list=[30, 10, 5]), (class_logits, classes)),
        "po_cosine_warmup_restarts_step": (scheduler.step, ()),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "po_lion": ["pytorch_optimizer.optimizer.lion.Lion.step"],
    "po_adabelief": ["pytorch_optimizer.optimizer.adabelief.AdaBelief.step"],
    "po_ranger": ["pytorch_optimizer.optimizer.ranger.Ranger.step"],
    "po_lamb": ["pytorch_optimizer.optimizer.lamb.Lamb.step"],
    "po_adan": ["pytorch_optimizer.optimizer.adan.Adan.step"],
    "po_madgrad": ["pytorch_optimizer.optimizer.madgrad.MADGRAD.step"],
    "po_adamp": ["pytorch_optimizer.optimizer.adamp.AdamP.step"],
    "po_diffgrad": ["pytorch_optimizer.optimizer.diffgrad.DiffGrad.step"],
    "po_yogi": ["pytorch_optimizer.optimizer.yogi.Yogi.step"],
    "po_novograd": ["pytorch_optimizer.optimizer.novograd.NovoGrad.step"],
    "po_adabound": ["pytorch_optimizer.optimizer.adabound.AdaBound.step"],
    "po_prodigy": ["pytorch_optimizer.optimizer.prodigy.Prodigy.step"],
    "po_dadapt_adam": ["pytorch_optimizer.optimizer.dadapt.DAdaptAdam.step"],
    "po_schedulefree_adamw": ["pytorch_optimizer.optimizer.schedulefree.ScheduleFreeAdamW.step"],
    "po_tiger": ["pytorch_optimizer.optimizer.tiger.Tiger.step"],
    "po_lars": ["pytorch_optimizer.optimizer.lars.LARS.step"],
    "po_sm3": ["pytorch_optimizer.optimizer.sm3.SM3.step"],
    "po_shampoo": ["pytorch_optimizer.optimizer.shampoo.Shampoo.step"],
    "po_soap": ["pytorch_optimizer.optimizer.soap.SOAP.step"],
    "po_muon": ["pytorch_optimizer.optimizer.muon.muon.Muon.step"],
    "po_came": ["pytorch_optimizer.optimizer.came.CAME.step"],
    "po_adafactor": ["pytorch_optimizer.optimizer.adafactor.AdaFactor.step"],
    "po_ademamix": ["pytorch_optimizer.optimizer.ademamix.AdEMAMix.step"],
    "po_adopt": ["pytorch_optimizer.optimizer.adopt.ADOPT.step"],
    "po_ranger21": ["pytorch_optimizer.optimizer.ranger21.Ranger21.step"],
    "po_kron": ["pytorch_optimizer.optimizer.psgd.Kron.step"],
    "po_stable_adamw": ["pytorch_optimizer.optimizer.adamw.StableAdamW.step"],
    "po_nero": ["pytorch_optimizer.optimizer.nero.Nero.step"],
    "po_swats": ["pytorch_optimizer.optimizer.swats.SWATS.step"],
    "po_adai": ["pytorch_optimizer.optimizer.adai.Adai.step"],
    "po_mars": ["pytorch_optimizer.optimizer.mars.MARS.step"],
    "po_adamg": ["pytorch_optimizer.optimizer.adamg.AdamG.step"],
    "po_alice": ["pytorch_optimizer.optimizer.racs.Alice.step"],
    "po_avagrad": ["pytorch_optimizer.optimizer.avagrad.AvaGrad.step"],
    "po_magma": ["pytorch_optimizer.optimizer.magma.Magma.step"],
    "po_sgdp": ["pytorch_optimizer.optimizer.adamp.SGDP.step"],
    "po_spam": ["pytorch_optimizer.optimizer.spam.SPAM.step"],
    "po_stable_spam": ["pytorch_optimizer.optimizer.spam.StableSPAM.step"],
    "po_clip_grad_norm": ["pytorch_optimizer.optimizer.utils.gradient.clip_grad_norm"],
    "po_gradfilter_ema": ["pytorch_optimizer.optimizer.grokfast.gradfilter_ema"],
    "po_agc": ["pytorch_optimizer.optimizer.agc.agc"],
    "po_lookahead_adamw": ["pytorch_optimizer.optimizer.lookahead.Lookahead.step"],
    "po_dice_loss": ["pytorch_optimizer.loss.dice.DiceLoss.forward"],
    "po_jaccard_loss": ["pytorch_optimizer.loss.jaccard.JaccardLoss.forward"],
    "po_lovasz_hinge_loss": ["pytorch_optimizer.loss.lovasz.LovaszHingeLoss.forward"],
    "po_focal_tversky_loss": ["pytorch_optimizer.loss.focal.FocalTverskyLoss.forward"],
    "po_bi_tempered_loss": ["pytorch_optimizer.loss.bi_tempered.BiTemperedLogisticLoss.forward"],
    "po_ldam_loss": ["pytorch_optimizer.loss.ldam.LDAMLoss.forward"],
    "po_cosine_warmup_restarts_step": ["pytorch_optimizer.lr_scheduler.cosine_anealing.CosineAnnealingWarmupRestarts.step"],
}
