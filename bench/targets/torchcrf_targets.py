"""Verify targets: torchcrf (pytorch-crf 0.7.2), structured prediction. The CRF's log likelihood
(forward algorithm, with a padding mask or a full one, each reduction, sequence- and batch-first)
and its Viterbi decode, a Python loop over time steps and a backtrace per sequence."""

import torch


S, B, TAGS = 6, 3, 5  # sequence length, batch, tags


def torchlint_targets():
    from torchcrf import CRF

    torch.manual_seed(0)
    crf = CRF(TAGS).eval()
    crf_bf = CRF(TAGS, batch_first=True).eval()
    emissions = torch.randn(S, B, TAGS)
    tags = torch.randint(0, TAGS, (S, B))
    lengths = torch.tensor([6, 4, 2])
    mask = torch.arange(S)[:, None] < lengths[None, :]  # (S, B), first step always on
    emissions_bf, tags_bf, mask_bf = emissions.transpose(0, 1), tags.transpose(0, 1), mask.transpose(0, 1)
    full = torch.ones(S, B, dtype=torch.bool)
    # Every target passes a bool mask: without one, pytorch-crf 0.7.2 builds a uint8 mask, and
    # `torch.where` on a uint8 condition fails under Dynamo's fake tensors (an error, not a break).
    return {
        "crf_llh_mask_sum": (crf, (emissions, tags), {"mask": mask}),
        "crf_llh_mask_mean": (crf, (emissions, tags), {"mask": mask, "reduction": "mean"}),
        "crf_llh_batch_first_token_mean": (crf_bf, (emissions_bf, tags_bf),
                                           {"mask": mask_bf, "reduction": "token_mean"}),
        "crf_llh_full_mask_none": (crf, (emissions, tags), {"mask": full, "reduction": "none"}),
        "crf_decode_mask": (crf.decode, (emissions,), {"mask": mask}),
        "crf_decode_full_mask": (crf.decode, (emissions,), {"mask": full}),
        "crf_decode_batch_first": (crf_bf.decode, (emissions_bf,), {"mask": mask_bf}),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "crf_llh_mask_sum": ["torchcrf.CRF.forward"],
    "crf_llh_mask_mean": ["torchcrf.CRF.forward"],
    "crf_llh_batch_first_token_mean": ["torchcrf.CRF.forward"],
    "crf_llh_full_mask_none": ["torchcrf.CRF.forward"],
    "crf_decode_full_mask": ["torchcrf.CRF.decode"],
    "crf_decode_mask": ["torchcrf.CRF.decode"],
    "crf_decode_batch_first": ["torchcrf.CRF.decode"],
}
