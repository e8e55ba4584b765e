"""Recompile cases from transformers 4.57.1 and x-transformers 2.11.24: sampling and decoding
loops that call the libraries' own logits processors, samplers and models once per token.

Between calls the sequence grows by a token, and per-request settings (top-k, temperature,
top-p) change.
"""

import torch

TOKENS = 10
VOCAB = 64


def _logits(batch=2):
    return torch.randn(batch, VOCAB)


def _ids(length, batch=2):
    return torch.randint(0, VOCAB, (batch, length))


def hf_top_k_per_request():
    """A new `TopKLogitsWarper(top_k)` per request, with top_k 5..14: an int attribute of the warper."""
    from transformers.generation.logits_process import TopKLogitsWarper

    for step in range(TOKENS):
        yield TopKLogitsWarper(5 + step), (_ids(4), _logits())


def hf_top_k_fixed():
    """One `TopKLogitsWarper(10)` over ten decoding steps: the ids grow, top_k stays."""
    from transformers.generation.logits_process import TopKLogitsWarper

    warper = TopKLogitsWarper(10)
    for length in range(4, 4 + TOKENS):
        yield warper, (_ids(length), _logits())


def hf_temperature_per_request():
    """A new `TemperatureLogitsWarper(t)` per request, t from 0.5 up by 0.1: a float attribute."""
    from transformers.generation.logits_process import TemperatureLogitsWarper

    for step in range(TOKENS):
        yield TemperatureLogitsWarper(0.5 + 0.1 * step), (_ids(4), _logits())


def hf_top_p_per_request():
    """A new `TopPLogitsWarper(p)` per request, p from 0.5 up by 0.05."""
    from transformers.generation.logits_process import TopPLogitsWarper

    for step in range(TOKENS):
        yield TopPLogitsWarper(0.5 + 0.05 * step), (_ids(4), _logits())


def hf_repetition_penalty_growing_ids():
    """`RepetitionPenaltyLogitsProcessor(1.2)` over a sequence that grows by a token per call."""
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    processor = RepetitionPenaltyLogitsProcessor(1.2)
    for length in range(4, 4 + TOKENS):
        yield processor, (_ids(length), _logits())


def hf_min_length_growing_ids():
    """`MinLengthLogitsProcessor(8, eos)` as the sequence grows past the minimum length."""
    from transformers.generation.logits_process import MinLengthLogitsProcessor

    processor = MinLengthLogitsProcessor(8, eos_token_id=0)
    for length in range(4, 4 + TOKENS):
        yield processor, (_ids(length), _logits())


def hf_no_repeat_ngram_growing_ids():
    """`NoRepeatNGramLogitsProcessor(2)` as the sequence grows: bans are looked up in Python per token."""
    from transformers.generation.logits_process import NoRepeatNGramLogitsProcessor

    processor = NoRepeatNGramLogitsProcessor(2)
    for length in range(4, 4 + TOKENS):
        yield processor, (_ids(length), _logits())


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config).eval()


class LogitsOnly(torch.nn.Module):
    """The model's logits alone: a cache object in the output compares only by identity."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args, **kwargs):
        out = self.model(*args, **kwargs)
        return out.logits if hasattr(out, "logits") else out[0]


def hf_llama_decode_with_cache():
    """A tiny Llama decoding one token per call with a `DynamicCache` that grows by one position."""
    from transformers import DynamicCache

    model = _llama()
    cache = DynamicCache()
    with torch.no_grad():
        model(input_ids=_ids(4, 1), past_key_values=cache, use_cache=True)
    wrapped = LogitsOnly(model)
    for _ in range(TOKENS):
        yield wrapped, (), {"input_ids": _ids(1, 1), "past_key_values": cache, "use_cache": True}


def hf_llama_growing_prompt():
    """The tiny Llama over prompts of 4..13 tokens, no cache."""
    model = _llama()
    for length in range(4, 4 + TOKENS):
        yield model, (), {"input_ids": _ids(length, 1), "use_cache": False}


def hf_llama_rotary_positions():
    """`LlamaRotaryEmbedding` for position ids that grow by one per call."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rotary = LlamaRotaryEmbedding(LlamaConfig(hidden_size=32, num_attention_heads=4, max_position_embeddings=64))
    for length in range(4, 4 + TOKENS):
        yield rotary, (torch.randn(1, length, 32), torch.arange(length)[None])


def xt_top_k_fraction():
    """x-transformers `top_k(logits, frac_num_tokens)` with the kept fraction from 0.05 up by 0.05 (`ceil` of a float)."""
    from x_transformers.autoregressive_wrapper import top_k

    for step in range(TOKENS):
        yield top_k, (_logits(),), {"frac_num_tokens": 0.05 + 0.05 * step}


def xt_top_k_count():
    """x-transformers `top_k(logits, k=k)` with k 2..11 passed as an int."""
    from x_transformers.autoregressive_wrapper import top_k

    for step in range(TOKENS):
        yield top_k, (_logits(),), {"k": 2 + step}


def xt_top_p_threshold():
    """x-transformers `top_p(logits, thres)` with the threshold from 0.5 up by 0.05."""
    from x_transformers.autoregressive_wrapper import top_p

    for step in range(TOKENS):
        yield top_p, (_logits(),), {"thres": 0.5 + 0.05 * step}


def xt_min_p_threshold():
    """x-transformers `min_p(logits, min_p)` with min_p from 0.05 up by 0.02."""
    from x_transformers.autoregressive_wrapper import min_p

    for step in range(TOKENS):
        yield min_p, (_logits(),), {"min_p": 0.05 + 0.02 * step}


def xt_gumbel_sample_temperature():
    """x-transformers `gumbel_sample(logits, temperature)` with the temperature annealed per token."""
    from x_transformers.autoregressive_wrapper import gumbel_sample

    for step in range(TOKENS):
        yield gumbel_sample, (_logits(),), {"temperature": 1.0 - 0.08 * step}


def _decoder():
    from x_transformers import Decoder, TransformerWrapper

    return TransformerWrapper(num_tokens=VOCAB, max_seq_len=64, attn_layers=Decoder(dim=32, depth=2, heads=2)).eval()


def xt_decoder_growing_sequence():
    """An x-transformers decoder over the generated sequence, one token longer each call (no cache)."""
    model = _decoder()
    for length in range(4, 4 + TOKENS):
        yield model, (_ids(length),)


def xt_decoder_cached_step():
    """An x-transformers decoder stepping one token per call, with the intermediates it returned as cache."""
    model = _decoder()
    with torch.no_grad():
        _, cache = model(_ids(4, 1), return_intermediates=True)
    tokens = _ids(4, 1)
    wrapped = LogitsOnly(model)
    for _ in range(TOKENS):
        tokens = torch.cat([tokens, _ids(1, 1)], 1)
        yield wrapped, (tokens,), {"cache": cache, "return_intermediates": True}
        with torch.no_grad():
            _, cache = model(tokens, cache=cache, return_intermediates=True)


def torchlint_targets():
    return {
        "hf_top_k_per_request": hf_top_k_per_request(),
        "hf_top_k_fixed": hf_top_k_fixed(),
        "hf_temperature_per_request": hf_temperature_per_request(),
        "hf_top_p_per_request": hf_top_p_per_request(),
        "hf_repetition_penalty_growing_ids": hf_repetition_penalty_growing_ids(),
        "hf_min_length_growing_ids": hf_min_length_growing_ids(),
        "hf_no_repeat_ngram_growing_ids": hf_no_repeat_ngram_growing_ids(),
        "hf_llama_decode_with_cache": hf_llama_decode_with_cache(),
        "hf_llama_growing_prompt": hf_llama_growing_prompt(),
        "hf_llama_rotary_positions": hf_llama_rotary_positions(),
        "xt_top_k_fraction": xt_top_k_fraction(),
        "xt_top_k_count": xt_top_k_count(),
        "xt_top_p_threshold": xt_top_p_threshold(),
        "xt_min_p_threshold": xt_min_p_threshold(),
        "xt_gumbel_sample_temperature": xt_gumbel_sample_temperature(),
        "xt_decoder_growing_sequence": xt_decoder_growing_sequence(),
        "xt_decoder_cached_step": xt_decoder_cached_step(),
    }
