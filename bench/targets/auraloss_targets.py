"""Verify targets: auraloss 0.4.0, audio losses. The time-domain losses (ESR, DC, LogCosh, SNR,
SI-SDR, SD-SDR) and the frequency-domain ones (STFT, multi-resolution, random-resolution, sum and
difference, with perceptual A-weighting through the FIR pre-filter) as a training step computes them."""

import numpy as np
import torch


T = 1024  # samples per signal
SMALL = dict(fft_sizes=[256, 128, 64], hop_sizes=[64, 32, 16], win_lengths=[256, 96, 64])


def torchlint_targets():
    from auraloss import freq, perceptual, time
    from auraloss.utils import apply_reduction

    torch.manual_seed(0)
    np.random.seed(0)
    mono = torch.randn(2, 1, T)
    mono_target = mono + 0.1 * torch.randn(2, 1, T)
    stereo = torch.randn(2, 2, T)
    stereo_target = stereo + 0.1 * torch.randn(2, 2, T)
    pair = (mono, mono_target)
    return {
        # -- time domain --------------------------------------------------------------------
        "al_esr": (time.ESRLoss(), pair),
        "al_dc": (time.DCLoss(reduction="sum"), pair),
        "al_logcosh": (time.LogCoshLoss(a=2.0), pair),
        "al_snr": (time.SNRLoss(zero_mean=False), pair),
        "al_sisdr": (time.SISDRLoss(), pair),
        "al_sdsdr": (time.SDSDRLoss(reduction="none"), pair),
        "al_apply_reduction": (apply_reduction, (mono.abs(),), {"reduction": "mean"}),
        # -- frequency domain ---------------------------------------------------------------
        "al_stft_full": (freq.STFTLoss(256, 64, 256, w_lin_mag=1.0, w_phs=0.1, output="full"), pair),
        "al_stft_l2_blackman": (freq.STFTLoss(128, 32, 128, window="blackman_window", mag_distance="L2",
                                              reduction="sum"), (stereo, stereo_target)),
        "al_stft_perceptual": (freq.STFTLoss(256, 64, 256, sample_rate=16000, perceptual_weighting=True),
                               (stereo, stereo_target)),
        "al_mrstft": (freq.MultiResolutionSTFTLoss(**SMALL), (stereo, stereo_target)),
        "al_random_resolution": (freq.RandomResolutionSTFTLoss(resolutions=2, min_fft_size=16, max_fft_size=256),
                                 pair),
        "al_sum_and_difference": (freq.SumAndDifferenceSTFTLoss(**SMALL, output="full"), (stereo, stereo_target)),
        "al_fir_highpass": (perceptual.FIRFilter(filter_type="hp", coef=0.85, fs=16000), pair),
        "al_fir_folded_diff": (perceptual.FIRFilter(filter_type="fd", fs=16000), pair),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "al_esr": ["auraloss.time.ESRLoss.forward"],
    "al_dc": ["auraloss.time.DCLoss.forward"],
    "al_logcosh": ["auraloss.time.LogCoshLoss.forward"],
    "al_snr": ["auraloss.time.SNRLoss.forward"],
    "al_sisdr": ["auraloss.time.SISDRLoss.forward"],
    "al_sdsdr": ["auraloss.time.SDSDRLoss.forward"],
    "al_apply_reduction": ["auraloss.utils.apply_reduction"],
    "al_stft_full": ["auraloss.freq.STFTLoss.forward"],
    "al_stft_l2_blackman": ["auraloss.freq.STFTLoss.forward"],
    "al_stft_perceptual": ["auraloss.freq.STFTLoss.forward"],
    "al_mrstft": ["auraloss.freq.MultiResolutionSTFTLoss.forward"],
    "al_random_resolution": ["auraloss.freq.RandomResolutionSTFTLoss.forward"],
    "al_sum_and_difference": ["auraloss.freq.SumAndDifferenceSTFTLoss.forward"],
    "al_fir_highpass": ["auraloss.perceptual.FIRFilter.forward"],
    "al_fir_folded_diff": ["auraloss.perceptual.FIRFilter.forward"],
}
