"""A module summary's hook facts are the same from the narrow text
(:func:`hooklint.sparse.summary_source`) as from the lint's sparse text
(:func:`hooklint.sparse.relevant_source`), which keeps far more of a hook-heavy module.

Compared on every module of ``tests/cross_file``, every rule example, every file of
``examples/`` and generated programs; the slow test compares the modules with hook text
of torch's installed sources and of the development set (``~/.cache/hooklint-devset/src``),
skipped when those trees are absent.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from hooklint.engine import python_ast
from hooklint.project import summary
from hooklint.project.summary import summarise
from hooklint.rules import all_rules
from hooklint.sparse import relevant_source, summary_source
from tests.test_fast_path_equivalence import generated

ROOT = Path(__file__).resolve().parent.parent


def _facts(text: str, narrow: bool):
    """The full summary of ``text``, its hook facts computed from the narrow text or
    from the lint's sparse text (``summarise`` with either)."""
    tree = python_ast(text)
    found = summary._outline(tree, summary.mark_lines(text))
    try:
        summary._add_hook_facts(text, tree, found, narrow=narrow)
    except (RecursionError, ValueError, MemoryError) as exc:
        return type(exc).__name__
    except Exception as exc:
        if type(exc).__name__ != "ParserSyntaxError":
            raise
        return "ParserSyntaxError"
    return found


def _compared(texts) -> int:
    """Assert that each text with hook text gets the same summary both ways; how many did."""
    compared = 0
    for label, text in texts:
        if not summary.has_hook_text(text):
            continue
        try:
            python_ast(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        assert _facts(text, narrow=True) == _facts(text, narrow=False), label
        compared += 1
    return compared


def _rule_examples():
    for rule in all_rules():
        for kind in ("VALID", "INVALID"):
            for index, example in enumerate(getattr(rule, kind)):
                yield f"{rule.code}-{kind}-{index}", textwrap.dedent(example.code).lstrip("\n")


def _files(root: Path):
    for path in sorted(root.rglob("*.py")):
        try:
            yield str(path), path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue


def test_cross_file_modules_and_examples_get_the_same_summary() -> None:
    cross_file = _compared(_files(ROOT / "tests" / "cross_file"))
    examples = _compared(_files(ROOT / "examples"))
    rules = _compared(_rule_examples())
    assert cross_file >= 10 and examples >= 10 and rules >= 200


def test_generated_programs_get_the_same_summary() -> None:
    assert _compared((f"seed {seed}", generated(seed)) for seed in range(60)) >= 50


def _hooky(text: str) -> set:
    found = summarise(text, hook_facts=False)
    keys = {(None, n) for n, e in found["functions"].items() if e.get("hooky")}
    keys.update(
        (c, n) for c, k in found["classes"].items() for n, e in k["methods"].items() if e.get("hooky")
    )
    return keys


MODULE = """\
import torch


class Tap:
    def __init__(self):
        self.handles = []
        self.seen = {}

    def attach(self, model):
        for m in model.modules():
            self.handles.append(m.register_forward_hook(self.capture))

    def capture(self, module, args, output):
        self.seen[module] = output

    def report(self):
        return {k: v.shape for k, v in self.seen.items()}

    def detach(self):
        for h in self.handles:
            h.remove()


def unrelated(x):
    return x + 1
"""


def test_the_narrow_text_keeps_what_the_facts_read_and_less_than_the_lint() -> None:
    tree = python_ast(MODULE)
    lint = relevant_source(MODULE, tree, summary._HOOK_TEXT)
    narrow = summary_source(MODULE, tree, _hooky(MODULE), 4, lint)
    for kept in ("def attach", "def detach", "def capture", "class Tap", "import torch"):
        assert kept in narrow
    for dropped in ("def report", "def __init__"):  # they share self.seen, self.handles
        assert dropped in lint and dropped not in narrow
    assert "def unrelated" not in narrow
    assert len(narrow.splitlines()) == len(MODULE.splitlines())  # positions unchanged
    full = summarise(MODULE)
    assert full["classes"]["Tap"]["methods"]["attach"]["fills"] == ["self.handles"]
    assert full["classes"]["Tap"]["methods"]["detach"]["removes"] == {"params": [], "attrs": ["self.handles"]}
    assert _facts(MODULE, narrow=True) == _facts(MODULE, narrow=False)


def test_only_hooky_entries_carry_hook_facts() -> None:
    text = textwrap.dedent(
        """\
        def outer(m, f):
            return middle(m, f)

        def middle(m, f):
            return inner(m, f)

        def inner(m, f):
            return [m.register_forward_hook(show)]

        def show(module, args, output):
            print(output)
        """
    )
    functions = summarise(text)["functions"]
    assert functions["inner"]["returns_handles"] is True
    assert functions["middle"]["returns_handles"] is True  # calls a hooky function
    assert "hooky" not in functions["outer"] and set(functions["outer"]) == {"line", "params"}


def _torch_root() -> Path | None:
    spec = importlib.util.find_spec("torch")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["torch", "devset"])
def test_real_modules_get_the_same_summary(tree: str) -> None:
    root = _torch_root() if tree == "torch" else Path.home() / ".cache" / "hooklint-devset" / "src"
    if root is None or not root.is_dir():
        pytest.skip(f"{tree}'s sources are not here")
    assert _compared(_files(root)) >= 20
