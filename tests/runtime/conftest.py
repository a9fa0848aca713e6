"""Shared setup for the runtime tests (torch is required here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

# The CI machines share two cores: one intra-op thread avoids thread-pool
# contention that makes tiny CPU ops ~100x slower.
torch.set_num_threads(1)

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name: str):
    """Import ``benchmarks/<name>.py`` by path (benchmarks/ is not a package)."""
    module_name = f"benchmarks_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


@pytest.fixture(scope="session")
def gpu_verify():
    return load_benchmark("gpu_verify")
