"""benchmarks/gpu_autoround.py: it skips cleanly without CUDA, and its decoder check runs on CPU."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_autoround.py"


@pytest.fixture(scope="module")
def gpu_autoround():
    spec = importlib.util.spec_from_file_location("benchmarks_gpu_autoround_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv", [[], ["--decoder-only"], ["--device", "cuda:0", "--smoke"]])
def test_skips_cleanly_without_cuda(gpu_autoround, monkeypatch, capsys, argv):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_autoround.main(argv) == 0
    assert json.loads(capsys.readouterr().out) == {"skipped": "no CUDA device"}


def test_decoder_check_passes_on_cpu(gpu_autoround):
    pytest.importorskip("transformers")
    result = gpu_autoround.run_decoder("cpu", smoke=True)
    assert result["ok"], result
    assert result["slope_bytes_per_iteration"] == 0
    assert result["use_cache_restored"]
    assert len(result["seconds_per_block"]) == 2
    assert result["export_logits_max_abs_difference"] < 1e-2
