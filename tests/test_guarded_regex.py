"""A :class:`~hooklint.guarded_regex.Guarded` pattern (and a
:class:`~hooklint.guarded_regex.CalledNames` search) finds what the same regex with its
leading look-behind finds, match for match: on hand-written corner cases, on
generated text made of the characters that decide it, and on the sources of the
installed libraries (hooklint's own, libcst's, click's)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import click
import libcst
import pytest

import hooklint
from hooklint.guarded_regex import (
    NO_NAME_OR_DOT,
    NO_NAME_OR_SELF_DOT,
    CalledNames,
    Guarded,
    after_no_name_or_dot,
    after_no_self_or_cls,
    names_alternation,
    not_after_word,
)

NAME = r"([A-Za-z_][A-Za-z0-9_]*)\s*\("
METHODS = ["attach", "detach", "f", "register_hook"]
#: (look-behind regex, the same as a Guarded pattern)
PAIRS = [
    (r"(?<![\w.])" + NAME, Guarded(NAME, after_no_name_or_dot)),
    (r"(?<![\w.])" + NAME, CalledNames(NO_NAME_OR_DOT)),
    (r"(?<!\bself)(?<!\bcls)\." + r"\s*" + NAME, Guarded(r"\.\s*" + NAME, after_no_self_or_cls)),
    (r"(?:(?<![\w.])|(?<=\bself\.)|(?<=\bcls\.))" + NAME, CalledNames(NO_NAME_OR_SELF_DOT)),
    (
        r"(?<![\w.])" + names_alternation(METHODS) + r"\b",
        Guarded(names_alternation(METHODS) + r"\b", after_no_name_or_dot),
    ),
    (
        r"(?<!\bself)(?<!\bcls)\.\s*" + names_alternation(METHODS, capture=True) + r"\s*\(",
        Guarded(r"\.\s*" + names_alternation(METHODS, capture=True) + r"\s*\(", after_no_self_or_cls),
    ),
    (r"\bself\.([A-Za-z_][A-Za-z0-9_]*)", Guarded(r"self\.([A-Za-z_][A-Za-z0-9_]*)", not_after_word)),
    (r"\b(?:self|cls)\." + NAME, Guarded(r"(?:self|cls)\." + NAME, not_after_word)),
    (
        r"\b" + names_alternation(METHODS) + r"\s*\(",
        Guarded(names_alternation(METHODS) + r"\s*\(", not_after_word),
    ),
    (r"\bimport[\s\\(]*\*", Guarded(r"import[\s\\(]*\*", not_after_word)),
    (r"\bdef[\s\\]+(\w+)", Guarded(r"def[\s\\]+(\w+)", not_after_word)),
    # names that are prefixes and suffixes of one another
    (
        r"\b" + names_alternation(["self", "elf", "f", "selfself"]) + r"\b",
        Guarded(names_alternation(["self", "elf", "f", "selfself"]) + r"\b", not_after_word),
    ),
]

CORNERS = [
    "f(x)",
    "x.f(y)",
    "self.f(y) cls.f(z) myself.f(a) xcls.f(b) self .f(c)",
    "a.b.c(d) 1f(x) _f(x) __f (x) é.f(x) éf(x) f\n(x) f\t(",
    "self.attach(fn); tap.attach(fn); self.taps[k].attach(fn) .detach_all() register_hook(",
    "ff(f(f(x))) a.f(b.f(c)) (self).f(x) [self][0].f(x)",
    "",
    "(",
    ".(",
    "self.",
    "cls.f(",
    "xself.f( self.f(",
    "xself.self.a xself.cls.f( self.self.x",
    "from m import * ximport * import(*) undef f(): def  g(): defdef h(): def\\\n k(",
]


def _same(regex: str, guarded: Guarded | CalledNames, text: str) -> None:
    plain = re.compile(regex)
    assert guarded.findall(text) == plain.findall(text), text
    if isinstance(guarded, CalledNames):
        return  # findall only
    assert [m.span() for m in guarded.finditer(text)] == [m.span() for m in plain.finditer(text)], text
    found, expected = guarded.search(text), plain.search(text)
    assert (found and found.span()) == (expected and expected.span()), text


@pytest.mark.parametrize("text", CORNERS)
def test_corner_cases(text: str) -> None:
    for regex, guarded in PAIRS:
        _same(regex, guarded, text)


def test_generated_text() -> None:
    pieces = [
        "self",
        "cls",
        ".",
        "(",
        " ",
        "\n",
        "f",
        "attach",
        "x",
        "_",
        "1",
        "é",
        "register_hook",
        "s",
        "elf",
        "\t",
        "def",
        "import",
        "*",
        "\\",
    ]
    rng = random.Random(20261203)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        for regex, guarded in PAIRS:
            _same(regex, guarded, text)


def test_real_sources() -> None:
    roots = [Path(m.__file__).parent for m in (hooklint, libcst, click)]
    files = sorted(p for root in roots for p in root.rglob("*.py"))
    assert len(files) > 100
    for path in files[::3]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for regex, guarded in PAIRS:
            _same(regex, guarded, text)


def test_a_refused_match_is_searched_again_after_its_first_word() -> None:
    # ``x.f(`` is refused by the bare-call look-behind; ``g(`` inside it is a call.
    assert Guarded(NAME, after_no_name_or_dot).findall("x.f(g(y))") == ["g"]
    assert CalledNames(NO_NAME_OR_DOT).findall("x.f(g(y)) h (z) 1k(w)") == ["g", "h"]
    assert CalledNames(NO_NAME_OR_SELF_DOT).findall("self.a(x.b(myself.c(cls.d(") == ["a", "d"]
    assert Guarded(r"\.\s*" + NAME, after_no_self_or_cls).findall("self.a(b.c(d))") == ["c"]
    # ``xself.self`` is refused at its first ``self``; the second one, after a dot, is not.
    assert Guarded(r"self\.([A-Za-z_]\w*)", not_after_word).findall("xself.self.a") == ["a"]
