"""A lint leaves nothing for the garbage collector: no reference cycle holds the
parsed tree, so reference counting frees it as soon as the lint returns (else the
collector walks every node of it after each file, a tenth of a large file's lint)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from hooklint.engine import lint_text
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

# Nested defs (a factory's closure), a class whose hooks go through helper methods,
# handles kept and removed: the facts and models a lint builds, and their caches.
NESTED = """
import torch


class Probe:
    def __init__(self, model):
        self.model = model
        self.depth = 0
        self.handles = []

    def _enter(self):
        self.depth += 1

    def _make(self, kind):
        def run(module, *args):
            if kind == "pre":
                self._enter()
            else:
                self.depth -= 1
        return run

    def attach(self):
        for sub in self.model.modules():
            self.handles.append(sub.register_forward_pre_hook(self._make("pre")))
            self.handles.append(sub.register_forward_hook(self._make("post")))

    def detach(self):
        for handle in self.handles:
            handle.remove()
"""


@pytest.mark.parametrize("preview", [False, True], ids=["default", "preview"])
def test_linting_leaves_no_cyclic_garbage(preview):
    rules = [r for r in all_rules() if r.default_on or preview]
    texts = [NESTED] + [p.read_text(encoding="utf-8") for p in EXAMPLES]
    assert len(texts) > 20
    context = RuleContext()
    for text in texts:  # the first lint imports and compiles what later ones reuse
        lint_text(text, "m.py", rules, context)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        found = []
        for text in texts:
            found.append(len(lint_text(text, "m.py", rules, context)))
            assert gc.collect() == 0
        assert any(found)  # the examples' findings went through the report too
    finally:
        if enabled:
            gc.enable()
