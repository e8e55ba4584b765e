"""Verify targets: efficientnet_pytorch 0.7.1, image classification backbone. A narrow, shallow
EfficientNet-B0 built with `from_name` (no weights), with static and dynamic same-padding convolutions,
the memory-efficient and plain Swish, drop connect in training mode, and the feature-extraction methods
users call for detection and segmentation backbones."""

import torch


# A quarter of B0's width and depth on 32x32 images: every stage still runs.
SMALL = dict(width_coefficient=0.25, depth_coefficient=0.25, num_classes=10)


def torchlint_targets():
    from efficientnet_pytorch.model import EfficientNet
    from efficientnet_pytorch.utils import drop_connect

    torch.manual_seed(0)
    images = torch.rand(2, 3, 32, 32)
    # Static same padding, sized for 32x32 inputs; the memory-efficient Swish (a custom autograd.Function).
    static = EfficientNet.from_name("efficientnet-b0", image_size=32, **SMALL).eval()
    # No image size: every convolution pads dynamically from the input's shape.
    dynamic = EfficientNet.from_name("efficientnet-b0", image_size=None, **SMALL).eval()
    dynamic.set_swish(memory_efficient=False)
    # Training mode on purpose: drop connect and dropout run, batch norm updates its statistics.
    training = EfficientNet.from_name("efficientnet-b0", image_size=32, drop_connect_rate=0.3, **SMALL).train()
    headless = EfficientNet.from_name("efficientnet-b0", image_size=32, include_top=False, **SMALL).eval()

    return {
        "en_b0_static_padding": (static, (images,)),
        "en_b0_dynamic_padding": (dynamic, (images,)),
        "en_b0_train_drop_connect": (training, (images,)),
        "en_b0_headless": (headless, (images,)),
        "en_extract_features": (static.extract_features, (images,)),
        "en_extract_features_dynamic": (dynamic.extract_features, (images,)),
        "en_extract_endpoints": (static.extract_endpoints, (images,)),
        "en_extract_endpoints_dynamic": (dynamic.extract_endpoints, (images,)),
        "en_drop_connect": (drop_connect, (torch.randn(4, 8, 4, 4), 0.2, True)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting: the
# dotted path of the function as it is defined (module path, then Class.method or function).
COMPILES = {
    "en_b0_static_padding": ["efficientnet_pytorch.model.EfficientNet.forward"],
    "en_b0_dynamic_padding": ["efficientnet_pytorch.model.EfficientNet.forward"],
    "en_b0_train_drop_connect": ["efficientnet_pytorch.model.EfficientNet.forward"],
    "en_b0_headless": ["efficientnet_pytorch.model.EfficientNet.forward"],
    "en_extract_features": ["efficientnet_pytorch.model.EfficientNet.extract_features"],
    "en_extract_features_dynamic": ["efficientnet_pytorch.model.EfficientNet.extract_features"],
    "en_extract_endpoints": ["efficientnet_pytorch.model.EfficientNet.extract_endpoints"],
    "en_extract_endpoints_dynamic": ["efficientnet_pytorch.model.EfficientNet.extract_endpoints"],
    "en_drop_connect": ["efficientnet_pytorch.utils.drop_connect"],
}
