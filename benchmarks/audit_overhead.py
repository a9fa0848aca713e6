"""Cost of HookAudit on forward-heavy work, as a ratio against no audit in the same run.

Two workloads, each timed alternately with and without an active audit
(best of ``--repeats`` to damp noise from other processes):

* ``forward``: an MLP forward/backward loop with hooks registered once (the common test);
* ``register_per_step``: the same loop with a capture hook registered and removed every step.

Prints JSON; the goal is a ratio <= 1.05.

    python benchmarks/audit_overhead.py [--steps 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch
from hooklint.runtime.audit import HookAudit
from hooklint.runtime.hooks import capture_outputs
from torch import nn


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(*(layer for _ in range(4) for layer in (nn.Linear(256, 256), nn.GELU())))


def forward_loop(model: nn.Module, x: torch.Tensor, steps: int, register_per_step: bool) -> None:
    for _ in range(steps):
        if register_per_step:
            with capture_outputs(model[-1]):
                model(x).sum().backward()
        else:
            model(x).sum().backward()


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(steps: int, repeats: int, register_per_step: bool) -> dict:
    model = make_model()
    x = torch.randn(64, 256)
    with model[0].register_forward_hook(lambda *args: None):  # a hooked model, as in a test
        forward_loop(model, x, steps // 4, register_per_step)  # warm-up
        plain, audited = [], []
        for _ in range(repeats):
            plain.append(timed(lambda: forward_loop(model, x, steps, register_per_step)))
            with HookAudit():
                audited.append(timed(lambda: forward_loop(model, x, steps, register_per_step)))
    return {
        "no_audit_s": min(plain),
        "audit_s": min(audited),
        "ratio": min(audited) / min(plain),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    results = {
        workload: measure(args.steps, args.repeats, register_per_step=workload == "register_per_step")
        for workload in ("forward", "register_per_step")
    }
    report = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "steps": args.steps,
        **results,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
