"""benchmarks/gpu_verify.py: the no-CUDA path and the optional AutoRound hook-in."""

from __future__ import annotations

import json

import torch


def test_skips_cleanly_without_cuda(gpu_verify, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_verify.main([]) == 0
    assert json.loads(capsys.readouterr().out) == {"skipped": "no CUDA"}


def test_cpu_run_prints_passing_report(gpu_verify, capsys):
    assert gpu_verify.main(["--device", "cpu", "--steps", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and set(report["variants"]) == set(gpu_verify.VARIANTS)


def test_autoround_result_is_included_when_the_module_defines_run(gpu_verify, monkeypatch, tmp_path):
    module = tmp_path / "gpu_autoround.py"
    monkeypatch.setattr(gpu_verify, "AUTOROUND_MODULE", module)
    assert gpu_verify.run_autoround() is None
    module.write_text("def run():\n    return {'ok': True}\n")
    assert gpu_verify.run_autoround() == {"ok": True}
    module.write_text("def run():\n    raise RuntimeError('no weights')\n")
    assert gpu_verify.run_autoround() == {"error": "RuntimeError: no weights"}
    module.write_text("VALUE = 1\n")
    assert "no run()" in gpu_verify.run_autoround()["error"]
