"""4-bit dequantization: hooklint.runtime.quant4bit against bitsandbytes on the CPU.

    pip install --no-deps --target /tmp/bnb50 bitsandbytes==0.50.2
    PYTHONPATH=/tmp/bnb50 python benchmarks/nf4_vs_bnb.py [--repeat 5]

For 2-D weights (1024², 2048², 4096²) and a 3-D fused-expert weight
([8, 1024, 1024]), NF4 and FP4, block size 64, float32 and bfloat16 output,
it quantizes with bitsandbytes and dequantizes the same packed codes with both
libraries. Printed as one JSON object, per case:

* ``ms``: the median dequantization time of ``--repeat`` runs, and ``time_ratio``
  (ours / bitsandbytes; the Must is <= 2);
* ``peak_temp_ratio``: the peak of memory allocated during one dequantization
  beyond its output, divided by the output's bytes (the Must is <= 1.5 times
  the output), measured from the torch profiler's memory events;
* ``max_abs_diff``: the largest difference between the two dequantized tensors,
  and each library's relative RMS error against the original weight.

One run, one intra-op thread (``torch.set_num_threads(1)``) so that a shared
machine measures both sides alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch
from hooklint.runtime.quant4bit import code_book, dequantize_4bit


def peak_bytes(fn):
    """Peak bytes allocated while ``fn`` runs, from the profiler's memory events in time order."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
    current = peak = 0
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        current += event.self_cpu_memory_usage
        peak = max(peak, current)
    return peak, result


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def rel_rms(approx, exact) -> float:
    return ((approx.float() - exact).pow(2).mean().sqrt() / exact.pow(2).mean().sqrt()).item()


def case(F, shape, quant_type, dtype, repeat: int) -> dict:
    weight = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    packed, state = F.quantize_4bit(weight.to(dtype), blocksize=64, quant_type=quant_type)
    code = code_book(quant_type)

    def theirs():
        return F.dequantize_4bit(packed, state)

    def ours():
        return dequantize_4bit(packed, state.absmax, code, torch.Size(shape), dtype)

    output_bytes = weight.numel() * torch.finfo(dtype).bits // 8
    their_peak, their_out = peak_bytes(theirs)
    our_peak, our_out = peak_bytes(ours)
    their_ms = median_ms(theirs, repeat)
    our_ms = median_ms(ours, repeat)
    return {
        "shape": list(shape),
        "quant_type": quant_type,
        "dtype": str(dtype).removeprefix("torch."),
        "ms": {"ours": round(our_ms, 2), "bnb": round(their_ms, 2)},
        "time_ratio": round(our_ms / their_ms, 3),
        "peak_temp_ratio": {
            "ours": round((our_peak - output_bytes) / output_bytes, 3),
            "bnb": round((their_peak - output_bytes) / output_bytes, 3),
        },
        "max_abs_diff": (our_out.float() - their_out.float()).abs().max().item(),
        "rel_rms_error": {
            "ours": round(rel_rms(our_out, weight), 5),
            "bnb": round(rel_rms(their_out, weight), 5),
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small shapes only")
    args = parser.parse_args(argv)
    try:
        import bitsandbytes
        import bitsandbytes.functional as F
    except ImportError:
        print(json.dumps({"skipped": "bitsandbytes is not installed"}))
        return 0
    torch.set_num_threads(1)
    shapes = (
        [(1024, 1024), (8, 256, 256)]
        if args.quick
        else [(1024, 1024), (2048, 2048), (4096, 4096), (8, 1024, 1024)]
    )
    cases = [
        case(F, shape, quant_type, dtype, args.repeat)
        for shape in shapes
        for quant_type in ("nf4", "fp4")
        for dtype in (torch.float32, torch.bfloat16)
    ]
    worst_time = max(c["time_ratio"] for c in cases)
    worst_peak = max(c["peak_temp_ratio"]["ours"] for c in cases)
    print(
        json.dumps(
            {
                "bitsandbytes": bitsandbytes.__version__,
                "torch": torch.__version__,
                "cases": cases,
                "worst_time_ratio": worst_time,
                "worst_peak_temp_ratio": worst_peak,
                "musts": {"time_ratio<=2": worst_time <= 2, "peak_temp<=1.5x_output": worst_peak <= 1.5},
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
