"""What one large file full of hooks costs to lint: a generated ~5,000-line module of
classes that register forward pre-/post-hook pairs whose state changes go through
helper methods, module helpers and factory closures (the shapes HL001/HL005 follow).

    python benchmarks/big_hook_file.py [--runs N] [--lines N]

The hooks are correct (releases clamped or guarded), so the file has no finding before
or after a change to the analysis: the figure is the analysis cost, not the cost of
reporting.  Prints the median CPU time (and wall time) of linting the text with every
default rule, in one process, the parse included. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import statistics
import time

import hooklint.engine as engine
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext

_BLOCK = '''
class Probe{n}:
    def __init__(self, model):
        self.depth = 0
        self.stack = []
        self.timers = {{}}
        self.model = model

    def _enter(self, module):
        self.depth += 1
        self.stack.append(type(module).__name__)
        self._timer("fwd").start()
        module._probe_started = True

    def _leave(self, module):
        self.depth = max(0, self.depth - 1)
        if self.stack:
            self.stack.pop()
        if getattr(module, "_probe_started", False):
            module._probe_started = False
            self._timer("fwd").stop()

    def _timer(self, name):
        return self.timers.setdefault(name, object())

    def _make(self, kind):
        def run(module):
            if kind == "pre":
                self._enter(module)
            else:
                self._leave(module)
        return run

    def _pre(self, module, args):
        self._make("pre")(module)

    def _post(self, module, args, output):
        self._make("post")(module)
        total = 0
        for value in args:
            total += 1
        return output

    def attach(self):
        for sub in self.model.modules():
            sub.register_forward_pre_hook(self._pre)
            sub.register_forward_hook(self._post, always_call=True)

    def report(self, values):
        result = []
        for index, value in enumerate(values):
            if index % 2:
                result.append(value * 2)
            else:
                result.append(value + {n})
        return result


def helper_{n}(module, args):
    counts[{n}] = counts.get({n}, 0) + 1
'''


def generate(lines: int) -> str:
    parts = ["import torch\n\ncounts = {}\n"]
    n = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(_BLOCK.format(n=n))
        n += 1
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=5000)
    args = parser.parse_args()
    text = generate(args.lines)
    rules = [r for r in all_rules() if r.default_on]
    context = RuleContext()
    cpu, wall = [], []
    found = 0
    for _ in range(args.runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        found = len(engine.lint_text(text, "big.py", rules, context))
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    print(f"{text.count(chr(10))} lines, {found} findings; CPU median {statistics.median(cpu) * 1000:.0f} ms "
          f"(min {min(cpu) * 1000:.0f}), wall median {statistics.median(wall) * 1000:.0f} ms, {args.runs} runs")


if __name__ == "__main__":
    main()
