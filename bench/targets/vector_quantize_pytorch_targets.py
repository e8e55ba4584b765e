"""Verify targets: vector-quantize-pytorch 1.32.0, neural codec quantizers. Vector quantization in
training mode (k-means initialisation, masked inputs, EMA codebook updates, dead-code expiry, orthogonal
and diversity losses, affine and directional reparametrisation, a learnable codebook with its in-place
optimizer), image-map inputs with the rotation trick, residual, grouped and hierarchical VQ, FSQ, LFQ,
residual FSQ/LFQ with quantizer dropout, latent quantization and SimVQ, plus the decoding methods a codec
calls to turn indices back into codes."""

import torch


BATCH, SEQ, DIM, CODES = 2, 16, 16, 32


def torchlint_targets():
    from vector_quantize_pytorch import (
        FSQ, LFQ, GroupedResidualVQ, HierarchicalVQ, LatentQuantize, ResidualFSQ, ResidualLFQ, ResidualVQ,
        SimVQ, VectorQuantize,
    )
    from vector_quantize_pytorch import vector_quantize_pytorch as vq_module

    torch.manual_seed(0)
    x = torch.randn(BATCH, SEQ, DIM)
    mask = torch.ones(BATCH, SEQ, dtype=torch.bool)
    mask[1, 10:] = False  # the second sequence is padded after 10 steps

    # Training mode on purpose for the quantizers below: the codebook's k-means initialisation, EMA
    # updates, dead-code replacement and quantizer dropout only run while training.
    vq_train = VectorQuantize(DIM, CODES, decay=0.8, kmeans_init=True, kmeans_iters=3,
                              use_cosine_sim=True, commitment_weight=1.0).train()
    vq_masked = VectorQuantize(DIM, CODES, kmeans_init=True, kmeans_iters=2).train()
    vq_dead_codes = VectorQuantize(DIM, CODES, decay=0.8, threshold_ema_dead_code=2,
                                   orthogonal_reg_weight=0.1, orthogonal_reg_active_codes_only=True,
                                   stochastic_sample_codes=True, sample_codebook_temp=0.5).train()
    vq_affine = VectorQuantize(DIM, CODES, affine_param=True, directional_reparam=True, threshold_ema_dead_code=2,
                               codebook_diversity_loss_weight=0.1,
                               commitment_use_cross_entropy_loss=True).train()
    vq_learnable = VectorQuantize(DIM, CODES, learnable_codebook=True, ema_update=False,
                                  in_place_codebook_optimizer=torch.optim.SGD).train()
    vq_heads = VectorQuantize(DIM, CODES, codebook_dim=8, heads=2, separate_codebook_per_head=True).eval()
    vq_fmap = VectorQuantize(DIM, CODES, accept_image_fmap=True, rotation_trick=True).eval()
    rvq_train = ResidualVQ(dim=DIM, num_quantizers=3, codebook_size=CODES, kmeans_init=True,
                           kmeans_iters=3, quantize_dropout=True).train()
    rvq = ResidualVQ(dim=DIM, num_quantizers=3, codebook_size=CODES).eval()
    grouped = GroupedResidualVQ(dim=DIM, groups=2, num_quantizers=2, codebook_size=CODES).eval()
    hierarchical = HierarchicalVQ(dim=DIM, codebook_size=CODES, scales=[1, 2, 4], kmeans_init=False,
                                  channel_first=False, threshold_ema_dead_code=0).eval()
    fsq = FSQ(levels=[8, 5, 5, 5], dim=DIM).eval()
    lfq = LFQ(dim=DIM, codebook_size=256, num_codebooks=2, spherical=True, soft_clamp_input_value=10.0,
              entropy_loss_weight=0.1, frac_per_sample_entropy=0.5,
              experimental_softplus_entropy_loss=True).train()
    rfsq_train = ResidualFSQ(dim=DIM, levels=[8, 5, 5], num_quantizers=3, quantize_dropout=True).train()
    rfsq = ResidualFSQ(dim=DIM, levels=[8, 5, 5], num_quantizers=3).eval()
    rlfq_train = ResidualLFQ(dim=DIM, num_quantizers=3, codebook_size=16, quantize_dropout=True).train()
    latent = LatentQuantize(levels=[5, 5, 8], dim=DIM, commitment_loss_weight=0.1,
                            quantization_loss_weight=0.1, optimize_values=True).train()
    simvq = SimVQ(dim=DIM, codebook_size=CODES).eval()

    vq_indices = vq_heads(x)[1]
    rvq_indices = rvq(x)[1]
    grouped_indices = grouped(x)[1]
    hierarchical_indices = hierarchical(x)[1]
    fsq_indices = fsq(x)[1]
    rfsq_indices = rfsq(x)[1]
    lfq_indices = lfq(x)[1]
    latent_indices = latent(x)[1]
    simvq_indices = simvq(x)[1]

    return {
        # Quantizers (forward): what an autoencoder's bottleneck runs every step.
        "vq_kmeans_cosine_train": (vq_train, (x,)),
        "vq_masked_kmeans_train": (vq_masked, (x,), {"mask": mask}),
        "vq_dead_code_orthogonal_train": (vq_dead_codes, (x,)),
        "vq_affine_reparam_train": (vq_affine, (x,), {"return_loss_breakdown": True}),
        "vq_learnable_codebook_train": (vq_learnable, (x,)),
        "vq_image_fmap_rotation": (vq_fmap, (torch.randn(BATCH, DIM, 4, 4),)),
        "vq_residual_dropout_train": (rvq_train, (x,)),
        "vq_grouped_residual": (grouped, (x,)),
        "vq_hierarchical": (hierarchical, (x,)),
        "vq_fsq": (fsq, (x,)),
        "vq_lfq_spherical_masked_train": (lfq, (x,), {"mask": mask}),
        "vq_residual_fsq_dropout_train": (rfsq_train, (x,)),
        "vq_residual_lfq_dropout_train": (rlfq_train, (x,)),
        "vq_latent_quantize_train": (latent, (x,)),
        "vq_simvq": (simvq, (x,)),
        # Decoding indices back into codes (a codec's decoder side), codebook upkeep, k-means on its own.
        "vq_get_output_from_indices": (vq_heads.get_output_from_indices, (vq_indices,)),
        "vq_get_codes_from_indices": (vq_heads.get_codes_from_indices, (vq_indices,)),
        "vq_residual_get_output_from_indices": (rvq.get_output_from_indices, (rvq_indices,)),
        "vq_residual_get_codes_from_indices": (rvq.get_codes_from_indices, (rvq_indices,)),
        "vq_grouped_get_output_from_indices": (grouped.get_output_from_indices, (grouped_indices,)),
        "vq_hierarchical_get_output_from_indices": (hierarchical.get_output_from_indices, (hierarchical_indices,)),
        "vq_fsq_indices_to_codes": (fsq.indices_to_codes, (fsq_indices,)),
        "vq_fsq_codes_to_indices": (fsq.codes_to_indices, (fsq.project_in(x),)),
        "vq_lfq_indices_to_codes": (lfq.indices_to_codes, (lfq_indices,)),
        "vq_lfq_bits_to_codes": (lfq.bits_to_codes, ((torch.rand(BATCH, SEQ, 8) > 0.5).float(),)),
        "vq_residual_fsq_get_output_from_indices": (rfsq.get_output_from_indices, (rfsq_indices,)),
        "vq_latent_indices_to_codes": (latent.indices_to_codes, (latent_indices,)),
        "vq_simvq_indices_to_codes": (simvq.indices_to_codes, (simvq_indices,)),
        "vq_update_in_place_optimizer": (vq_learnable.update_in_place_optimizer, ()),
        "vq_kmeans": (vq_module.kmeans, (torch.randn(1, 64, DIM), 8), {"num_iters": 3, "use_cosine_sim": True}),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "vq_kmeans_cosine_train": ["vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.forward"],
    "vq_masked_kmeans_train": ["vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.forward"],
    "vq_dead_code_orthogonal_train": ["vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.forward"],
    "vq_affine_reparam_train": ["vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.forward"],
    "vq_learnable_codebook_train": ["vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.forward"],
    "vq_image_fmap_rotation": ["vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.forward"],
    "vq_residual_dropout_train": ["vector_quantize_pytorch.residual_vq.ResidualVQ.forward"],
    "vq_grouped_residual": ["vector_quantize_pytorch.residual_vq.GroupedResidualVQ.forward"],
    "vq_hierarchical": ["vector_quantize_pytorch.hierarchical_vq.HierarchicalVQ.forward"],
    "vq_fsq": ["vector_quantize_pytorch.finite_scalar_quantization.FSQ.forward"],
    "vq_lfq_spherical_masked_train": ["vector_quantize_pytorch.lookup_free_quantization.LFQ.forward"],
    "vq_residual_fsq_dropout_train": ["vector_quantize_pytorch.residual_fsq.ResidualFSQ.forward"],
    "vq_residual_lfq_dropout_train": ["vector_quantize_pytorch.residual_lfq.ResidualLFQ.forward"],
    "vq_latent_quantize_train": ["vector_quantize_pytorch.latent_quantization.LatentQuantize.forward"],
    "vq_simvq": ["vector_quantize_pytorch.sim_vq.SimVQ.forward"],
    "vq_get_output_from_indices": [
        "vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.get_output_from_indices"],
    "vq_get_codes_from_indices": [
        "vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.get_codes_from_indices"],
    "vq_residual_get_output_from_indices": ["vector_quantize_pytorch.residual_vq.ResidualVQ.get_output_from_indices"],
    "vq_residual_get_codes_from_indices": ["vector_quantize_pytorch.residual_vq.ResidualVQ.get_codes_from_indices"],
    "vq_grouped_get_output_from_indices": [
        "vector_quantize_pytorch.residual_vq.GroupedResidualVQ.get_output_from_indices"],
    "vq_hierarchical_get_output_from_indices": [
        "vector_quantize_pytorch.hierarchical_vq.HierarchicalVQ.get_output_from_indices"],
    "vq_fsq_indices_to_codes": ["vector_quantize_pytorch.finite_scalar_quantization.FSQ.indices_to_codes"],
    "vq_fsq_codes_to_indices": ["vector_quantize_pytorch.finite_scalar_quantization.FSQ.codes_to_indices"],
    "vq_lfq_indices_to_codes": ["vector_quantize_pytorch.lookup_free_quantization.LFQ.indices_to_codes"],
    "vq_lfq_bits_to_codes": ["vector_quantize_pytorch.lookup_free_quantization.LFQ.bits_to_codes"],
    "vq_residual_fsq_get_output_from_indices": [
        "vector_quantize_pytorch.residual_fsq.ResidualFSQ.get_output_from_indices"],
    "vq_latent_indices_to_codes": ["vector_quantize_pytorch.latent_quantization.LatentQuantize.indices_to_codes"],
    "vq_simvq_indices_to_codes": ["vector_quantize_pytorch.sim_vq.SimVQ.indices_to_codes"],
    "vq_update_in_place_optimizer": [
        "vector_quantize_pytorch.vector_quantize_pytorch.VectorQuantize.update_in_place_optimizer"],
    "vq_kmeans": ["vector_quantize_pytorch.vector_quantize_pytorch.kmeans"],
}
