"""Verify targets: x-transformers 2.11.24, transformer building blocks. A decoder and a vision
transformer forward, and the autoregressive wrapper's sampling loop."""

import torch

BATCH, SEQ, VOCAB = 2, 8, 128


def torchlint_targets():
    import x_transformers as xt

    torch.manual_seed(0)
    decoder = xt.TransformerWrapper(
        num_tokens=VOCAB, max_seq_len=64, attn_layers=xt.Decoder(dim=32, depth=2, heads=4, rotary_pos_emb=True))
    vit = xt.ViTransformerWrapper(
        image_size=32, patch_size=8, num_classes=10, attn_layers=xt.Encoder(dim=32, depth=2, heads=4))
    generator = xt.AutoregressiveWrapper(decoder).eval()
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ))
    return {
        "xt_decoder": (decoder.eval(), (tokens,)),
        "xt_generate": (generator.generate, (tokens, 3), {"temperature": 0.0}),
        "xt_vit": (vit.eval(), (torch.randn(BATCH, 3, 32, 32),)),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting.
COMPILES = {
    "xt_decoder": ["x_transformers.x_transformers.TransformerWrapper.forward"],
    "xt_generate": ["x_transformers.autoregressive_wrapper.AutoregressiveWrapper.generate"],
    "xt_vit": ["x_transformers.x_transformers.ViTransformerWrapper.forward"],
}
