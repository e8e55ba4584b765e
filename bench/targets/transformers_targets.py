"""Verify targets: transformers 4.57.1, language and vision models. Forward passes of decoder,
encoder, encoder-decoder and vision models, greedy generation, and the models whose code depends
on the data: mixture-of-experts routing (Mixtral, Switch Transformers) and Longformer's global
attention."""

import os

# Set before transformers is imported: it reads these once, at import.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch

BATCH, SEQ, VOCAB = 2, 8, 128
# Small enough that each model runs eagerly on a CPU in well under a second.
TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64)
# One forward pass needs no key/value cache, and a returned cache object cannot be compared
# with eager's output; `generate()` exercises the cache.
NO_CACHE = {"use_cache": False}


def _tokens():
    return torch.randint(0, VOCAB, (BATCH, SEQ))


def _mask():
    return torch.ones(BATCH, SEQ, dtype=torch.long)


def _image(channels=3, size=32):
    return torch.randn(BATCH, channels, size, size)


def torchlint_targets():
    import transformers as tf

    torch.manual_seed(0)
    gpt2 = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4)).eval()
    # Longformer attends globally to the first token; 16 tokens fill whole attention windows.
    long_ids = torch.randint(2, VOCAB, (BATCH, 16))
    global_attention = torch.zeros_like(long_ids)
    global_attention[:, 0] = 1
    return {
        "hf_llama": (tf.LlamaForCausalLM(tf.LlamaConfig(**TEXT, num_key_value_heads=2)).eval(), (_tokens(),), NO_CACHE),
        "hf_mistral": (tf.MistralForCausalLM(tf.MistralConfig(**TEXT, num_key_value_heads=2, sliding_window=4)).eval(),
                       (_tokens(),), NO_CACHE),
        "hf_qwen2": (tf.Qwen2ForCausalLM(tf.Qwen2Config(**TEXT, num_key_value_heads=2)).eval(), (_tokens(),), NO_CACHE),
        "hf_gpt2": (gpt2, (_tokens(),), NO_CACHE),
        "hf_gpt2_generate": (gpt2.generate, (_tokens(),), {
            "attention_mask": _mask(), "max_new_tokens": 3, "do_sample": False, "pad_token_id": 0}),
        "hf_bert": (tf.BertForSequenceClassification(tf.BertConfig(**TEXT)).eval(), (_tokens(),), {"attention_mask": _mask()}),
        # SDPA cannot return attention weights: BERT logs a warning and falls back.
        "hf_bert_attentions": (tf.BertModel(tf.BertConfig(**TEXT)).eval(), (_tokens(),),
                               {"attention_mask": _mask(), "output_attentions": True}),
        "hf_t5": (tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
            decoder_start_token_id=0)).eval(), (_tokens(),), {"decoder_input_ids": _tokens(), **NO_CACHE}),
        "hf_vit": (tf.ViTForImageClassification(tf.ViTConfig(
            image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64, num_labels=10)).eval(), (_image(),)),
        "hf_convnext": (tf.ConvNextForImageClassification(tf.ConvNextConfig(
            hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], num_labels=10)).eval(), (_image(),)),
        "hf_mixtral": (tf.MixtralForCausalLM(tf.MixtralConfig(
            **TEXT, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2)).eval(), (_tokens(),), NO_CACHE),
        "hf_switch_transformers": (tf.SwitchTransformersForConditionalGeneration(tf.SwitchTransformersConfig(
            vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_heads=4, num_experts=4,
            num_layers=2, num_decoder_layers=2, num_sparse_encoder_layers=1,
            num_sparse_decoder_layers=1, decoder_start_token_id=0)).eval(),
            (_tokens(),), {"decoder_input_ids": _tokens(), **NO_CACHE}),
        "hf_longformer": (tf.LongformerModel(tf.LongformerConfig(
            **{**TEXT, "max_position_embeddings": 80}, attention_window=[4, 4], pad_token_id=1)).eval(),
            (long_ids,), {"global_attention_mask": global_attention}),
    }


# What a user compiling each target would name in torchlint's `entry-points` setting.
COMPILES = {
    "hf_llama": ["transformers.models.llama.modeling_llama.LlamaForCausalLM.forward"],
    "hf_mistral": ["transformers.models.mistral.modeling_mistral.MistralForCausalLM.forward"],
    "hf_qwen2": ["transformers.models.qwen2.modeling_qwen2.Qwen2ForCausalLM.forward"],
    "hf_gpt2": ["transformers.models.gpt2.modeling_gpt2.GPT2LMHeadModel.forward"],
    "hf_gpt2_generate": ["transformers.generation.utils.GenerationMixin.generate"],
    "hf_bert": ["transformers.models.bert.modeling_bert.BertForSequenceClassification.forward"],
    "hf_bert_attentions": ["transformers.models.bert.modeling_bert.BertModel.forward"],
    "hf_t5": ["transformers.models.t5.modeling_t5.T5ForConditionalGeneration.forward"],
    "hf_vit": ["transformers.models.vit.modeling_vit.ViTForImageClassification.forward"],
    "hf_convnext": ["transformers.models.convnext.modeling_convnext.ConvNextForImageClassification.forward"],
    "hf_mixtral": ["transformers.models.mixtral.modeling_mixtral.MixtralForCausalLM.forward"],
    "hf_switch_transformers": [
        "transformers.models.switch_transformers.modeling_switch_transformers.SwitchTransformersForConditionalGeneration.forward"
    ],
    "hf_longformer": ["transformers.models.longformer.modeling_longformer.LongformerModel.forward"],
}
