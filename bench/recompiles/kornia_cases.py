"""Recompile cases from kornia 0.9.0: the library's own image functions, compiled and called once
per batch of an augmentation pipeline, with the augmentation's strength drawn or scheduled per batch.
"""

import torch

CALLS = 10


def _images():
    return torch.rand(2, 3, 16, 16)


def blur_sigma_per_batch():
    """`gaussian_blur2d(img, (5, 5), (s, s))` with sigma drawn per batch as Python floats."""
    from kornia.filters import gaussian_blur2d

    for index in range(CALLS):
        sigma = 0.5 + 0.1 * index
        yield gaussian_blur2d, (_images(), (5, 5), (sigma, sigma))


def blur_kernel_size_per_batch():
    """`gaussian_blur2d(img, (k, k), (1.0, 1.0))` with an odd kernel size 3..21 per batch."""
    from kornia.filters import gaussian_blur2d

    for index in range(CALLS):
        size = 3 + 2 * index
        yield gaussian_blur2d, (_images(), (size, size), (1.0, 1.0))


def brightness_factor_per_batch():
    """`adjust_brightness(img, factor)` with the factor scheduled per batch as a Python float."""
    from kornia.enhance import adjust_brightness

    for index in range(CALLS):
        yield adjust_brightness, (_images(), 0.05 * index)


def brightness_factor_tensor_per_batch():
    """`adjust_brightness(img, factor)` with a per-sample factor tensor drawn per batch."""
    from kornia.enhance import adjust_brightness

    for _ in range(CALLS):
        yield adjust_brightness, (_images(), torch.rand(2) * 0.3)


def rotate_angle_per_batch():
    """`rotate(img, angle)` with a tensor of angles drawn per batch."""
    from kornia.geometry.transform import rotate

    for _ in range(CALLS):
        yield rotate, (_images(), torch.rand(2) * 90.0)


def resize_per_batch():
    """`resize(img, (s, s))` with a multi-scale training size 12..30 per batch."""
    from kornia.geometry.transform import resize

    for index in range(CALLS):
        size = 12 + 2 * index
        yield resize, (_images(), (size, size))


def torchlint_targets():
    return {
        "blur_sigma_per_batch": blur_sigma_per_batch(),
        "blur_kernel_size_per_batch": blur_kernel_size_per_batch(),
        "brightness_factor_per_batch": brightness_factor_per_batch(),
        "brightness_factor_tensor_per_batch": brightness_factor_tensor_per_batch(),
        "rotate_angle_per_batch": rotate_angle_per_batch(),
        "resize_per_batch": resize_per_batch(),
    }
