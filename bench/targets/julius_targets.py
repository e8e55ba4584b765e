"""Verify targets: julius 0.2.8, audio DSP. The functional forms (resample_frac, lowpass/highpass/
bandpass filters, split_bands, fft_conv1d), which build their filter module inside the call, and
the cached modules (ResampleFrac, LowPassFilters, HighPassFilters, SplitBands, FFTConv1d) a user keeps."""

import torch


T = 1024  # samples per signal


def torchlint_targets():
    import julius
    from julius import core

    torch.manual_seed(0)
    wave = torch.randn(2, 1, T)
    stereo = torch.randn(2, 2, T)
    weight, bias = torch.randn(3, 2, 96), torch.randn(3)
    return {
        # -- functional forms --------------------------------------------------------------
        "jl_resample_frac": (julius.resample_frac, (wave, 16000, 12000)),
        "jl_resample_frac_full": (julius.resample_frac, (stereo, 4, 5), {"zeros": 8, "full": True}),
        "jl_lowpass_filter_fft": (julius.lowpass_filter, (wave, 0.02), {"fft": True}),
        "jl_lowpass_filters_stride": (julius.lowpass_filters, (stereo, [0.1, 0.25]), {"stride": 2, "pad": False}),
        "jl_highpass_filter": (julius.highpass_filter, (wave, 0.2)),
        "jl_highpass_filters": (julius.highpass_filters, (stereo, [0.05, 0.3]), {"fft": False}),
        "jl_bandpass_filter": (julius.bandpass_filter, (wave, 0.05, 0.25)),
        "jl_split_bands": (julius.split_bands, (stereo, 16000), {"n_bands": 4}),
        "jl_fft_conv1d": (julius.fft_conv1d, (stereo, weight, bias), {"stride": 2, "padding": 8}),
        "jl_mel_frequencies": (core.mel_frequencies, (12, 20.0, 8000.0)),
        "jl_volume": (core.volume, (stereo,)),
        # -- modules a user builds once ----------------------------------------------------
        "jl_resample_module": (julius.ResampleFrac(3, 2), (stereo,), {"output_length": 600}),
        "jl_lowpass_module": (julius.LowPassFilters([0.05, 0.2], zeros=4), (wave,)),
        "jl_highpass_module": (julius.HighPassFilter(0.1, stride=2, fft=True), (wave,)),
        "jl_splitbands_module": (julius.SplitBands(16000, cutoffs=[500, 2000, 5000]), (stereo,)),
        "jl_fftconv_module": (julius.FFTConv1d(2, 4, 128, stride=1, padding=0), (stereo,)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "jl_resample_frac": ["julius.resample.resample_frac"],
    "jl_resample_frac_full": ["julius.resample.resample_frac"],
    "jl_lowpass_filter_fft": ["julius.lowpass.lowpass_filter"],
    "jl_lowpass_filters_stride": ["julius.lowpass.lowpass_filters"],
    "jl_highpass_filter": ["julius.filters.highpass_filter"],
    "jl_highpass_filters": ["julius.filters.highpass_filters"],
    "jl_bandpass_filter": ["julius.filters.bandpass_filter"],
    "jl_split_bands": ["julius.bands.split_bands"],
    "jl_fft_conv1d": ["julius.fftconv.fft_conv1d"],
    "jl_mel_frequencies": ["julius.core.mel_frequencies"],
    "jl_volume": ["julius.core.volume"],
    "jl_resample_module": ["julius.resample.ResampleFrac.forward"],
    "jl_lowpass_module": ["julius.lowpass.LowPassFilters.forward"],
    "jl_highpass_module": ["julius.filters.HighPassFilter.forward"],
    "jl_splitbands_module": ["julius.bands.SplitBands.forward"],
    "jl_fftconv_module": ["julius.fftconv.FFTConv1d.forward"],
}
