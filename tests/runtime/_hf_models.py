"""Small random-init transformers models for the AutoRound tests (no downloads)."""

from __future__ import annotations

import torch
import transformers

VOCAB = 128


def llama(layers: int = 2) -> torch.nn.Module:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
    )
    return transformers.LlamaForCausalLM(config).eval()


def gpt2(layers: int = 2) -> torch.nn.Module:
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=VOCAB,
        n_embd=64,
        n_layer=layers,
        n_head=4,
        n_positions=64,
        bos_token_id=1,
        eos_token_id=2,
    )
    return transformers.GPT2LMHeadModel(config).eval()


def mixtral(layers: int = 2) -> torch.nn.Module:
    torch.manual_seed(0)
    config = transformers.MixtralConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=64,
    )
    return transformers.MixtralForCausalLM(config).eval()


def t5(layers: int = 2) -> torch.nn.Module:
    torch.manual_seed(0)
    config = transformers.T5Config(
        vocab_size=VOCAB,
        d_model=64,
        d_kv=16,
        d_ff=128,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=4,
        decoder_start_token_id=0,
    )
    return transformers.T5ForConditionalGeneration(config).eval()


def token_ids(samples: int, length: int, seed: int = 1) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(3, VOCAB, (samples, length), generator=generator)


def t5_calibration(samples: int = 8, length: int = 16) -> list[dict]:
    ids = token_ids(samples, length)
    return [
        {"input_ids": ids[i : i + 1], "decoder_input_ids": ids[i : i + 1, : length // 2]}
        for i in range(samples)
    ]
