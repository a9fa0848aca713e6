"""Does skipping irrelevant definitions (hooklint.sparse) change any finding, and what
does it save?  Lints every candidate file of the given trees twice in one process —
with the sparse parse and with the whole file — and compares the findings.

    python benchmarks/sparse_parse.py [TREE ...]     # default: the installed torch package

Not collected by pytest.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import hooklint.engine as engine
from hooklint.files import SourceError, discover, read_source
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext


def _default_tree() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit("torch is not installed: name a tree to lint")
    return Path(spec.origin).parent


def _findings(candidates, rules) -> tuple[set, float]:
    found = set()
    started = time.perf_counter()
    for path, text in candidates:
        for v in engine.lint_text(text, path, rules, RuleContext()):
            found.add((v.path, v.start, v.end, v.code, v.message, v.fix))
    return found, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    args = parser.parse_args()
    trees = args.trees or [_default_tree()]
    rules = [r for r in all_rules() if r.code != "HL000"]  # preview rules included
    tokens = engine.prefilter_tokens(rules)
    files, _ = discover(trees, [], Path.cwd())
    candidates = []
    for path in files:
        try:
            source = read_source(path)
        except SourceError:
            continue
        if engine.is_candidate(source.text, tokens):
            candidates.append((str(path), source.text))
    sparse, sparse_seconds = _findings(candidates, rules)
    original = engine.relevant_source
    engine.relevant_source = lambda text, tree, tokens: text
    try:
        whole, whole_seconds = _findings(candidates, rules)
    finally:
        engine.relevant_source = original
    print(f"{len(candidates)} candidate files of {len(files)}; findings: sparse {len(sparse)}, whole {len(whole)}")
    print(f"same findings: {sparse == whole}")
    print(f"lint time: sparse {sparse_seconds:.1f} s, whole files {whole_seconds:.1f} s, ratio {sparse_seconds / whole_seconds:.2f}")
    for difference in sorted(sparse ^ whole, key=str)[:20]:
        print("  differs:", difference[:5])


if __name__ == "__main__":
    main()
