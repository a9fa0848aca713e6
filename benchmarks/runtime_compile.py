"""How each hooklint.runtime helper behaves under torch.compile (eager, default, fullgraph=True).

    python benchmarks/runtime_compile.py [--backend inductor]

For each helper it builds a small model, runs it eagerly, with
``torch.compile(model)`` and with ``torch.compile(model, fullgraph=True)``, and
prints one JSON object: per helper and mode, ``ok`` (the helper did what it
promises), what was observed, or the error. The helpers are set up before the
first compiled call (the supported order); ``capture_after_run`` registers a
capture after the compiled model ran, the case ``HLR005`` warns about.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import torch
import torch.nn.utils.parametrize as P
from hooklint.runtime.hooks import capture_outputs, paired_forward_hooks
from hooklint.runtime.parametrize import enable_dequant_cache, replace_parameter_4bit
from torch import nn


def model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))


def compiled(m, mode, backend):
    if mode == "eager":
        return m
    return torch.compile(m, backend=backend, fullgraph=(mode == "fullgraph"))


def paired(mode, backend):
    m = model()
    calls = []
    paired_forward_hooks(
        m[0], lambda mod: calls.append("enter") or len(calls), lambda mod, s: calls.append(("exit", s))
    )
    run = compiled(m, mode, backend)
    run(torch.randn(2, 8))
    run(torch.randn(2, 8))
    return calls == ["enter", ("exit", 1), "enter", ("exit", 3)], {"calls": len(calls)}


def capture(mode, backend):
    m = model()
    run = compiled(m, mode, backend)
    with capture_outputs(m[0]) as captured:
        run(torch.randn(2, 8))
    return len(captured[m[0]]) == 1, {"records": len(captured[m[0]])}


def capture_after_run(mode, backend):
    m = model()
    run = compiled(m, mode, backend)
    run(torch.randn(2, 8))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with capture_outputs(m[0]) as captured:
            run(torch.randn(2, 8))
    warned = any("HLR005" in str(w.message) for w in caught)
    records = len(captured[m[0]])
    # promise: either the records are there, or the warning said they would not be
    return records == 1 or warned, {"records": records, "warned": warned}


def dequant_cache(mode, backend):
    m = model()
    for layer in (m[0], m[2]):
        replace_parameter_4bit(layer, "weight")
    enable_dequant_cache(m)
    run = compiled(m, mode, backend)
    x = torch.randn(2, 8)
    expected = m(x)  # eager reference
    out = run(x)
    return bool(torch.allclose(out, expected, atol=1e-5)) and P._cache_enabled == 0 and P._cache == {}, {
        "cache_enabled_after": P._cache_enabled,
    }


HELPERS = {
    "paired_forward_hooks": paired,
    "capture_outputs": capture,
    "capture_after_run": capture_after_run,
    "enable_dequant_cache+replace_parameter_4bit": dequant_cache,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="inductor")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    results = {}
    for name, helper in HELPERS.items():
        for mode in ("eager", "default", "fullgraph"):
            torch._dynamo.reset()
            started = time.perf_counter()
            try:
                ok, seen = helper(mode, args.backend)
                entry = {"ok": ok, **seen}
            except Exception as exc:  # noqa: BLE001 -- the point is to report it
                entry = {"ok": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
            entry["seconds"] = round(time.perf_counter() - started, 1)
            results[f"{name}/{mode}"] = entry
            P._cache_enabled, P._cache = 0, {}
    print(json.dumps({"torch": torch.__version__, "backend": args.backend, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
