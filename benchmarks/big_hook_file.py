"""What one large file full of hooks costs to lint: a generated ~5,000-line module of
classes that register forward pre-/post-hook pairs whose state changes go through
helper methods, module helpers and factory closures (the shapes HL001/HL005 follow).

    python benchmarks/big_hook_file.py [--runs N] [--lines N] [--baseline TREE] [--phases]

The hooks are correct (releases clamped or guarded), so the file has no finding before
or after a change to the analysis: the figure is the analysis cost, not the cost of
reporting.  Prints the median CPU time (and wall time) of linting the text with every
default rule, in one process, the parse included.

``--baseline TREE`` also times another hooklint on the same text: ``TREE`` holds its
``hooklint`` package (``fixes`` and ``runtime`` moved inside it, as an installed copy
has them), e.g. an old commit's ``git archive``.  Each version runs in its own
process (this one as installed, the other with ``TREE`` first on ``sys.path``), one
lint at a time, alternately, so both see the same load; the report gives both medians
and their ratio (goal, issue 12: this version <= 1.3x the baseline 243d3f7).
``--phases`` also prints where this version's time goes: the median CPU time of each
step of the lint, one at a time (CPython's parse, the nesting guard, the lexer, the
screen, libcst's parse of the screened text, the facts and the rules).
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_BLOCK = """
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
"""


def generate(lines: int) -> str:
    parts = ["import torch\n\ncounts = {}\n"]
    n = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(_BLOCK.format(n=n))
        n += 1
    return "".join(parts)


def _linter(text: str):
    """A function that lints ``text`` once with the default rules and returns
    ``(cpu seconds, wall seconds, findings)``; the first lint (imports, caches) is done."""
    import hooklint.engine as engine
    from hooklint.rules import all_rules
    from hooklint.rules.base import RuleContext

    # What a plain `hooklint check` runs: the default-on rules outside preview (a preview
    # rule's `default_on` only applies with --preview).
    rules = [r for r in all_rules() if r.default_on and not getattr(r, "preview", False)]
    context = RuleContext()

    def lint() -> tuple[float, float, int]:
        started, started_cpu = time.perf_counter(), time.process_time()
        found = len(engine.lint_text(text, "big.py", rules, context))
        return time.process_time() - started_cpu, time.perf_counter() - started, found

    lint()
    return lint


def _phases(text: str, runs: int) -> None:
    """The median CPU time of each step of linting ``text`` on the screen's path."""
    import gc

    from hooklint.analysis.collector import collect
    from hooklint.engine.nesting import check_nesting
    from hooklint.engine.parse import parse_module, python_ast
    from hooklint.engine.prefilter import SEED_TOKENS, prefilter_tokens, seed_regex
    from hooklint.lexical import lex
    from hooklint.rules import all_rules
    from hooklint.rules.base import RuleContext
    from hooklint.screen import screening_source

    rules = [
        r for r in all_rules() if r.default_on and not getattr(r, "preview", False) and r.code != "HL000"
    ]
    context = RuleContext()
    seeds = seed_regex(prefilter_tokens(rules, context.registration_wrappers) + SEED_TOKENS)
    tree = python_ast(text)
    lexed = lex(text)
    screened, _ = screening_source(text, tree, seeds, lexed)
    module = parse_module(screened)

    def facts_and_rules() -> None:
        facts = collect(module, context.registration_wrappers, None)
        for rule in rules:
            list(rule().check(facts, context))
        facts.release()

    steps = [
        ("CPython parse", lambda: python_ast(text)),
        ("nesting guard", lambda: check_nesting(tree, text)),
        ("lexer", lambda: lex(text)),
        ("screen", lambda: screening_source(text, tree, seeds, lexed)),
        (f"libcst parse ({screened.count(chr(10))} lines)", lambda: parse_module(screened)),
        ("facts", lambda: collect(module, context.registration_wrappers, None).release()),
        ("facts and rules", facts_and_rules),
    ]
    enabled = gc.isenabled()
    gc.disable()  # as in a lint
    try:
        for name, step in steps:
            step()
            times = []
            for _ in range(runs):
                started = time.process_time()
                step()
                times.append(time.process_time() - started)
                gc.collect()  # what the step left is not the next one's cost
            print(f"  {name:<28} CPU median {statistics.median(times) * 1000:6.0f} ms")
    finally:
        if enabled:
            gc.enable()


def _worker(lines: int) -> None:
    """Lint on each line read from stdin; answer with one JSON line per lint."""
    lint = _linter(generate(lines))
    import hooklint

    print(json.dumps({"version": hooklint.__file__}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(lint()), flush=True)


def _start(lines: int, tree: str | None) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, *filter(None, [env.get("PYTHONPATH")])])
    process = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--worker", "--lines", str(lines)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    hello = json.loads(process.stdout.readline())  # type: ignore[union-attr]
    return process, hello["version"]


def _ask(process: subprocess.Popen) -> tuple[float, float, int]:
    process.stdin.write("run\n")  # type: ignore[union-attr]
    process.stdin.flush()  # type: ignore[union-attr]
    return tuple(json.loads(process.stdout.readline()))  # type: ignore[union-attr, return-value]


def _line(name: str, runs: list) -> str:
    cpu = [r[0] for r in runs]
    wall = [r[1] for r in runs]
    return (
        f"{name}: {runs[-1][2]} findings; CPU median {statistics.median(cpu) * 1000:.0f} ms "
        f"(min {min(cpu) * 1000:.0f}), wall median {statistics.median(wall) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--baseline", metavar="TREE", help="another hooklint's source tree, to compare with")
    parser.add_argument("--phases", action="store_true", help="also time each step of this version's lint")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.lines)
        return
    text = generate(args.lines)
    print(f"{text.count(chr(10))} lines, {args.runs} runs each")
    if args.baseline is None:
        lint = _linter(text)
        print(_line("hooklint", [lint() for _ in range(args.runs)]))
        if args.phases:
            _phases(text, args.runs)
        return
    current, current_version = _start(args.lines, None)
    baseline, baseline_version = _start(args.lines, os.path.abspath(args.baseline))
    if current_version == baseline_version:
        sys.exit(f"both runs import the same hooklint ({current_version}): is TREE/hooklint there?")
    mine, theirs = [], []
    try:
        for _ in range(args.runs):
            mine.append(_ask(current))
            theirs.append(_ask(baseline))
    finally:
        for process in (current, baseline):
            process.stdin.close()  # type: ignore[union-attr]
            process.wait()
    print(_line(f"this     ({os.path.dirname(current_version)})", mine))
    print(_line(f"baseline ({os.path.dirname(baseline_version)})", theirs))
    ratio = statistics.median(r[0] for r in mine) / statistics.median(r[0] for r in theirs)
    print(f"CPU median ratio this / baseline = {ratio:.2f}x (goal <= 1.3)")
    if args.phases:
        print("this version, step by step:")
        _phases(text, args.runs)


if __name__ == "__main__":
    main()
