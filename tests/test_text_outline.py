"""The outline read from a module's text equals the one CPython's AST gives
(hooklint/project/text_outline.py), or the reader declines (None)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from hooklint.project.summary import _outline, summarise
from hooklint.project.text_outline import text_outline


def parsed(text: str) -> dict:
    return _outline(ast.parse(text), None)


def assert_same(text: str) -> None:
    got, want = text_outline(text), parsed(text)
    assert got is not None, "the reader declined"
    assert got == want
    # Key order is meaning: star imports are searched in order, "*1", "*2" are numbered.
    for part in ("imports", "classes", "functions"):
        assert list(got[part].items()) == list(want[part].items())
    for name, entry in got["classes"].items():
        assert list(entry["methods"]) == list(want["classes"][name]["methods"])


TRICKY = [
    # imports of every shape, module level through if/try blocks
    "import os\nimport a.b.c\nimport a.b as ab, json\nfrom . import x\nfrom .. pkg . mod import (y as z,\n   w,)\n"
    "from .m import *\nfrom n import *\nfrom __future__ import annotations\nimport p \\\n  .q as r\n",
    "try:\n    import fast as impl\nexcept ImportError:\n    import slow as impl\nelse:\n    from fast import extra\n"
    "finally:\n    import never\n",
    "if TYPE_CHECKING:\n    from t import T\nelif OTHER:\n    class Alt(Base):\n        def m(self, a): pass\n"
    "else:\n    def f(x, /, y, *args, z=1, **kw): pass\n",
    # blocks the outline does not read
    "for i in range(3):\n    import loop\nelse:\n    import loop_else\nwhile False:\n    def w(): pass\n"
    "with ctx:\n    class C: pass\nmatch x:\n    case 1:\n        import m\n",
    "def outer():\n    import inner\n    class Inner: pass\n    def nested(): pass\n",
    # classes: bases, keywords, subscripts, calls, decorators, nested defs
    "class A(Base, mixins.Mixin, Generic[T], metaclass=Meta, **kw):\n    '''doc (with a bracket'''\n"
    "    x: int = 3\n    @staticmethod\n    def s(a, b): pass\n    @property\n    def p(self): ...\n"
    "    @classmethod\n    def c(cls, *, k): pass\n    async def a(self, q: 'Q' = f(1, 2)) -> None:\n"
    "        def inner(self, z): pass\n    if X:\n        def hidden(self): pass\n    class Nested:\n"
    "        def n(self): pass\n    def dup(self): pass\n    def dup(self, again): pass\n",
    "class B(namedtuple('B', 'a b')): pass\nclass D(x[0].y, a . b, f(x)[1], Q[1][2]):\n    pass\n"
    "class E:\n    def one(self): ...\n    def two(self, a): ...\n    def three(self): ...\n",
    # strings and comments that look like code
    'x = """\nclass Fake(Base):\n    def no(self): pass\nimport fake\n"""\n# class Comment: pass\n'
    "y = f'{a}(' + 'def z('\ndef real(a=')', b=\"(\"):\n    s = '''\n)\n'''\n    return s\nclass After: pass\n",
    # brackets and backslashes that reach below the block's indentation
    "def f():\n    x = [\n1, 2]\n    y = \\\n3\nclass G: pass\n",
    "def f(\n    a,\n    b: int = (\n        1\n    ),\n):\n    pass\n",
    # redefinitions keep the first position and the last value
    "def f(a): pass\nclass f: pass\ndef g(): pass\ndef f(b, c): pass\nimport f\n",
    "\n\n\n# only comments\n\n",
    # a lambda's parameters are not the function's
    "def f(a=lambda x, y: x, b=2, *, c=lambda: (1, 2), d=lambda q=1, r={1: 2}: lambda s, t: 0): pass\n"
    "def g(la=1, lambdax=2, b=x.lambda_): pass\n",
    "class H(\n    Base,\n    # a comment\n    Other,  # more\n):\n    def m(\n        self,\n    ): pass\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_text_outline_equals_the_parsed_outline(text: str) -> None:
    assert_same(text)


DECLINED = [
    "import a; import b\n",
    "if X: import a\n",
    "if X:\n\timport a\n",
    "try:\n    import a\nexcept* E:\n    pass\n",
    "class K((Base)): pass\n",
    "class Ü(Base): pass\n",
    "from m import ñ\n",
    "x = (\n",
]


@pytest.mark.parametrize("text", DECLINED)
def test_text_outline_declines_what_it_does_not_follow(text: str) -> None:
    assert text_outline(text) is None


def test_a_module_without_hook_text_is_summarised_without_a_parse(monkeypatch) -> None:
    import hooklint.engine as engine

    monkeypatch.setattr(engine, "python_ast", lambda *a, **k: pytest.fail("parsed"))
    text = "from .base import Base\nclass C(Base):\n    def m(self, a): return a\n"
    assert summarise(text, hook_facts=False) == parsed(text)
    assert summarise(text) == parsed(text)


def test_a_module_with_hook_text_is_still_parsed() -> None:
    text = "class C:\n    def m(self, mod, fn):\n        return mod.register_forward_hook(fn)\n"
    assert summarise(text, hook_facts=False)["classes"]["C"]["methods"]["m"]["hooky"] is True


def test_declined_text_falls_back_to_the_parse() -> None:
    text = "import a; import b\nclass C(a.B): pass\n"
    assert summarise(text, hook_facts=False) == parsed(text)


def _torch_files() -> list[Path]:
    spec = importlib.util.find_spec("torch")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(next(iter(spec.submodule_search_locations)))
    return sorted((root / "nn").rglob("*.py"))


def test_text_outline_equals_the_parsed_outline_on_torchs_sources() -> None:
    files = _torch_files()
    if not files:
        pytest.skip("torch's sources are not installed")
    read = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        got = text_outline(text)
        if got is None:
            continue
        read += 1
        assert got == parsed(text), path
    assert read >= len(files) * 0.9  # the reader declines only rare constructs
