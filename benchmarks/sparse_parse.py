"""Does skipping what cannot matter (hooklint.screen, hooklint.sparse) change any
finding, and what does it save?  Lints every candidate file of the given trees twice
in one process — skipping, and parsing whole files — and compares the findings; once
with every rule that allows screening (screen, then the sparse text), once with every
rule (the sparse text alone).  Exits 1 when findings differ.

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


def _findings(candidates, rules, skip_irrelevant: bool) -> tuple[set, float]:
    found = set()
    started = time.perf_counter()
    for path, text in candidates:
        for v in engine.lint_text(text, path, rules, RuleContext(), skip_irrelevant=skip_irrelevant):
            found.add((v.path, v.start, v.end, v.code, v.message, v.fix))
    return found, time.perf_counter() - started


def _compare(label: str, rules, files) -> bool:
    tokens = engine.prefilter_tokens(rules)
    candidates = []
    for path in files:
        try:
            source = read_source(path)
        except SourceError:
            continue
        if engine.is_candidate(source.text, tokens):
            candidates.append((str(path), source.text))
    sparse, sparse_seconds = _findings(candidates, rules, skip_irrelevant=True)
    whole, whole_seconds = _findings(candidates, rules, skip_irrelevant=False)
    print(
        f"{label}: {len(candidates)} candidate files of {len(files)}; findings: skipping {len(sparse)}, whole files {len(whole)}"
    )
    print(f"  same findings: {sparse == whole}")
    print(
        f"  lint time: skipping {sparse_seconds:.1f} s, whole files {whole_seconds:.1f} s, ratio {sparse_seconds / whole_seconds:.2f}"
    )
    for difference in sorted(sparse ^ whole, key=str)[:20]:
        print(
            "  differs:",
            "only when skipping" if difference in sparse else "only in whole files",
            difference[:5],
        )
    return sparse == whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    args = parser.parse_args()
    trees = args.trees or [_default_tree()]
    files, _ = discover(trees, [], Path.cwd())
    every = [r for r in all_rules() if r.code != "HL000"]  # preview rules included
    # A rule that cannot be screened (HL010) turns screening off for the whole run, so
    # the screen is compared with every other rule, and the sparse text with them all.
    same = _compare(
        "screened, then sparse (every screenable rule)", [r for r in every if r.screenable], files
    )
    same &= _compare("sparse only (every rule)", every, files)
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
