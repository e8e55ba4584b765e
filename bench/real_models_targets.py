"""Verify targets: tiny random-weight models from transformers, diffusers and x-transformers.

Run through `bench/bench_verify.py`, which installs the libraries outside the repository and
puts them on PYTHONPATH. Every config is built here, so nothing is fetched from a model hub.
Most plain forward passes compile as one graph; the mixture-of-experts models, Longformer's
global attention, `generate()` and the diffusion schedulers' sampling loops are where these
libraries really break the graph.
"""

import os

# Set before the libraries are imported: they read these once, at import.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch

BATCH, SEQ, VOCAB = 2, 8, 128
# Small enough that each model runs eagerly on a CPU in well under a second.
TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64)


def _tokens():
    return torch.randint(0, VOCAB, (BATCH, SEQ))


def _image(channels=3, size=32):
    return torch.randn(BATCH, channels, size, size)


def _ready(model):
    return model.eval()


# One forward pass needs no key/value cache, and a returned cache object cannot be compared
# with eager's output; `generate()` below exercises the cache.
NO_CACHE = {"use_cache": False}


def _mask():
    return torch.ones(BATCH, SEQ, dtype=torch.long)


def transformers_targets():
    import transformers as tf

    gpt2 = _ready(tf.GPT2LMHeadModel(
        tf.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4)))
    # Longformer attends globally to the first token; 16 tokens fill whole attention windows.
    long_ids = torch.randint(2, VOCAB, (BATCH, 16))
    global_attention = torch.zeros_like(long_ids)
    global_attention[:, 0] = 1
    return {
        "llama": (_ready(tf.LlamaForCausalLM(tf.LlamaConfig(**TEXT, num_key_value_heads=2))),
                  (_tokens(),), NO_CACHE),
        "mistral": (_ready(tf.MistralForCausalLM(
            tf.MistralConfig(**TEXT, num_key_value_heads=2, sliding_window=4))), (_tokens(),), NO_CACHE),
        "qwen2": (_ready(tf.Qwen2ForCausalLM(tf.Qwen2Config(**TEXT, num_key_value_heads=2))),
                  (_tokens(),), NO_CACHE),
        "gpt2": (gpt2, (_tokens(),), NO_CACHE),
        "gpt2_generate": (gpt2.generate, (_tokens(),), {
            "attention_mask": _mask(), "max_new_tokens": 3, "do_sample": False, "pad_token_id": 0}),
        "bert": (_ready(tf.BertForSequenceClassification(tf.BertConfig(**TEXT))),
                 (_tokens(),), {"attention_mask": _mask()}),
        # SDPA cannot return attention weights: BERT logs a warning and falls back.
        "bert_attentions": (_ready(tf.BertModel(tf.BertConfig(**TEXT))), (_tokens(),),
                            {"attention_mask": _mask(), "output_attentions": True}),
        "t5": (_ready(tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
            decoder_start_token_id=0))), (_tokens(),), {"decoder_input_ids": _tokens(), **NO_CACHE}),
        "vit": (_ready(tf.ViTForImageClassification(tf.ViTConfig(
            image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64, num_labels=10))), (_image(),)),
        "convnext": (_ready(tf.ConvNextForImageClassification(tf.ConvNextConfig(
            hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], num_labels=10))), (_image(),)),
        "mixtral": (_ready(tf.MixtralForCausalLM(tf.MixtralConfig(
            **TEXT, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2))),
            (_tokens(),), NO_CACHE),
        "switch_transformers": (_ready(tf.SwitchTransformersForConditionalGeneration(
            tf.SwitchTransformersConfig(
                vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_heads=4, num_experts=4,
                num_layers=2, num_decoder_layers=2, num_sparse_encoder_layers=1,
                num_sparse_decoder_layers=1, decoder_start_token_id=0))),
            (_tokens(),), {"decoder_input_ids": _tokens(), **NO_CACHE}),
        "longformer": (_ready(tf.LongformerModel(tf.LongformerConfig(
            **{**TEXT, "max_position_embeddings": 80}, attention_window=[4, 4], pad_token_id=1))),
            (long_ids,), {"global_attention_mask": global_attention}),
    }


class SamplingLoop(torch.nn.Module):
    """A few denoising steps, as a diffusers pipeline runs them."""

    def __init__(self, unet, scheduler, steps=3):
        super().__init__()
        self.unet, self.scheduler = unet, scheduler
        scheduler.set_timesteps(steps)

    def forward(self, sample):
        for t in self.scheduler.timesteps:
            sample = self.scheduler.step(self.unet(sample, t).sample, t, sample).prev_sample
        return sample


BLOCKS = dict(block_out_channels=(32, 64), layers_per_block=1, norm_num_groups=8)


def _unet2d():
    import diffusers as df

    return df.UNet2DModel(
        sample_size=16, in_channels=3, out_channels=3, **BLOCKS,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"))


def diffusers_targets():
    import diffusers as df

    cond_unet = df.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, **BLOCKS,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8)
    vae = df.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32),
        layers_per_block=1, norm_num_groups=8,
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
    steps = torch.tensor([10] * BATCH)
    return {
        "unet2d": (_ready(_unet2d()), (_image(3, 16), steps)),
        "unet2d_condition": (_ready(cond_unet), (_image(4, 16), steps, torch.randn(BATCH, 4, 32))),
        "autoencoder_kl": (_ready(vae), (_image(3, 16),)),
        "ddpm_sampling": (_ready(SamplingLoop(_unet2d(), df.DDPMScheduler(num_train_timesteps=10))),
                          (_image(3, 16),)),
        "ddim_sampling": (_ready(SamplingLoop(_unet2d(), df.DDIMScheduler(num_train_timesteps=10))),
                          (_image(3, 16),)),
    }


def x_transformers_targets():
    import x_transformers as xt

    decoder = xt.TransformerWrapper(
        num_tokens=VOCAB, max_seq_len=64,
        attn_layers=xt.Decoder(dim=32, depth=2, heads=4, rotary_pos_emb=True))
    vit = xt.ViTransformerWrapper(
        image_size=32, patch_size=8, num_classes=10,
        attn_layers=xt.Encoder(dim=32, depth=2, heads=4))
    generator = _ready(xt.AutoregressiveWrapper(decoder))
    return {
        "xt_decoder": (_ready(decoder), (_tokens(),)),
        "xt_generate": (generator.generate, (_tokens(), 3), {"temperature": 0.0}),
        "xt_vit": (_ready(vit), (_image(),)),
    }


def torchlint_targets():
    # Weights and inputs are the same on every run.
    torch.manual_seed(0)
    targets = {}
    for declare in (transformers_targets, diffusers_targets, x_transformers_targets):
        targets.update(declare())
    return targets
