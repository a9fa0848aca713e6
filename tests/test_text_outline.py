"""The outline read from a module's text equals the one CPython's AST gives
(hooklint/project/text_outline.py), or the reader declines (None)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from hooklint.project.summary import _outline, mark_lines, summarise
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


def test_a_module_with_hook_text_gets_its_outline_and_marks_without_a_parse(monkeypatch) -> None:
    import hooklint.engine as engine

    text = "class C:\n    def m(self, mod, fn):\n        return mod.register_forward_hook(fn)\n"
    with monkeypatch.context() as patched:
        patched.setattr(engine, "python_ast", lambda *a, **k: pytest.fail("parsed"))
        outline = summarise(text, hook_facts=False)
    assert outline["classes"]["C"]["methods"]["m"]["hooky"] is True
    assert summarise(text)["classes"]["C"]["methods"]["m"]["hooky"] is True  # the hook facts parse


def parsed_marks(text: str) -> dict:
    return _outline(ast.parse(text), mark_lines(text))


def _marks(outline: dict) -> set[tuple[str, str]]:
    found = {("", n) for n, e in outline["functions"].items() if e.get("hooky")}
    return found | {
        (c, n) for c, k in outline["classes"].items() for n, e in k["methods"].items() if e.get("hooky")
    }


def _unmarked(outline: dict) -> dict:
    import copy

    outline = copy.deepcopy(outline)
    for entry in outline["functions"].values():
        entry.pop("hooky", None)
    for klass in outline["classes"].values():
        for entry in klass["methods"].values():
            entry.pop("hooky", None)
    return outline


def assert_marks_cover(text: str) -> set[tuple[str, str]]:
    """The text's outline with marks is the parsed outline, with every parsed mark;
    returns the marks the text adds."""
    got, want = text_outline(text, marks=True), parsed_marks(text)
    assert got is not None, "the reader declined"
    assert _unmarked(got) == _unmarked(want)
    assert _marks(want) <= _marks(got)
    return _marks(got) - _marks(want)


#: Hook text where the parsed outline reads it and where it does not, each with the
#: marks the reader gives beyond the parse's (none, unless said), and the parse's.
MARKED = [
    # the body's code marks; a docstring another statement follows, and the signature, do not
    (
        "def a(m, f):\n    return m.register_forward_hook(f)\n"
        'def b(m):\n    """Calls h.remove() on each."""\n    return m\n'
        "def register_forward_hook(self, hook):\n    '''register_forward_hook'''\n    self.hooks.append(hook)\n",
        set(),
        {("", "a")},
    ),
    # a docstring alone is the body the parse reads: it marks
    ("def only():\n    '''h.remove()'''\n", set(), {("", "only")}),
    # an f-string or bytes first statement is no docstring; nor is a string that goes on
    (
        "def f(m):\n    f'register_{m}'\n    return 1\n"
        "def g(m):\n    b'register_hook'\n    return 1\n"
        "def k(m):\n    '''{}.register_forward_hook'''.format(m)\n    return 1\n"
        "def k2(m):\n    '''\n    {}.register_forward_hook\n    '''.format(m)\n    return 1\n"
        "def j(m):\n    r'''\n    multi\n    '''\n    x = 'register_forward_hook'\n",
        set(),
        # ``k2``'s string holds line breaks: prose, as a message is (hook_code)
        {("", "f"), ("", "g"), ("", "k"), ("", "j")},
    ),
    # prose strings and comments are not code: a warning's text, a comment, a call in
    # a comment (no spread); a getattr's attribute name is code
    (
        "import warnings\n"
        "def w(m):\n    warnings.warn('use register_forward_hook instead')\n    return m\n"
        "def c(m, f):\n    # m.register_forward_hook(f)\n    return m\n"
        "def a(m, f):\n    return getattr(m, 'register_forward_hook')(f)\n"
        "def b(m, f):\n    x = m  # a(m, f)\n    return x\n"
        "def d(m):\n    return m.h.remove()  # remove it\n",
        set(),
        {("", "a"), ("", "d")},
    ),
    # one-line bodies, decorators, async, a nested def, a def in an if block
    (
        "import functools\n@functools.cache\ndef one(m, f): return m.register_forward_hook(f)\n"
        "async def two(m):\n    def inner():\n        m.h.remove()\n    return inner\n"
        "if X:\n    def three(m, f):\n        return m.register_hook(f)\n"
        "else:\n    def four(m, f):\n        return f\n",
        set(),
        {("", "one"), ("", "two"), ("", "three")},
    ),
    # methods spread one call deep within their class, functions within the module
    (
        "class C(Base):\n    def attach(self, m, f):\n        self.h = m.register_forward_hook(f)\n"
        "    def setup(self, m, f):\n        return self.attach(m, f)\n"
        "    def outer(self, m, f):\n        return self.setup(m, f)\n"
        "def attach(x):\n    return x\n"
        "def uses(x):\n    return attach(x)\n",
        set(),
        {("C", "attach"), ("C", "setup")},
    ),
    # a token after the last statement, in a comment: neither reads it (comments are
    # blanked), though the region holds the comment's line
    (
        "def tail(m):\n    return m\n    # then h.remove()\n\ndef next_one():\n    pass\n",
        set(),
        set(),
    ),
    # strings that span lines, at any indentation, and brackets that close at column 0
    (
        "def s(m):\n    x = '''\nregister_forward_hook\ndef fake():\n'''\n    return x\n"
        "class D:\n    def m(self):\n        y = (\n1)\n        self.h.remove()\n",
        set(),
        {("D", "m")},  # ``s``'s token is in a string holding line breaks: prose
    ),
    # the same name twice: the parse keeps the last def's entry and mark; the reader
    # marks the name by what either body holds
    (
        "def twice(m, f):\n    return m.register_forward_hook(f)\ndef twice(m, f):\n    return f\n",
        {("", "twice")},
        set(),
    ),
]


@pytest.mark.parametrize("text, extra, want", MARKED)
def test_text_outline_marks_include_every_parsed_mark(text: str, extra: set, want: set) -> None:
    assert _marks(parsed_marks(text)) == want  # what the cases say the parse gives
    assert assert_marks_cover(text) == extra


def test_a_long_block_the_reader_cannot_pass_over_gives_the_parsed_outline() -> None:
    # a tab in the code (not the indentation) keeps the reader from passing over the
    # body at once: it reads it line by line, trying again less and less often
    body = "".join(f"        x{i} =\t{i}\n" for i in range(3000))
    text = (
        f"class A:\n    def m(self):\n{body}    def n(self, h):\n        h.remove()\nclass B(A):\n    pass\n"
    )
    assert_same(text.replace("h.remove()", "h.clear()"))
    assert assert_marks_cover(text) == set()


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


def test_text_outline_marks_include_every_parsed_mark_on_torchs_sources() -> None:
    from hooklint.project.summary import has_hook_text

    files = [p for p in _torch_files() if has_hook_text(p.read_text(encoding="utf-8"))]
    if not files:
        pytest.skip("torch's sources are not installed")
    extra = marked = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        if text_outline(text, marks=True) is None:
            continue
        marked += 1
        extra += len(assert_marks_cover(text))
    assert marked >= len(files) * 0.9
    assert extra <= marked  # few marks beyond the parse's: each costs a module's hook facts
