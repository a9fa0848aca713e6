r"""Regexes whose leading look-behind is checked in Python, not by the regex engine.

A pattern that starts with a look-behind (``(?<![\w.])name\(``, ``(?<!\bself)\.m\(``)
or with ``\b`` makes CPython's regex engine test the assertion at every position of
the text: it cannot skip ahead to a literal or a character class first.  On a 400 kB
module that is 3-60 times slower than the same pattern without it.  :class:`Guarded`
searches with the rest of the pattern and tests the assertion in Python at each
match; a refused match is searched again from the next position the assertion could
accept (the end of the run of word characters it starts with, when the assertion
refuses every position after a word character), so it finds exactly what the regex
with the assertion finds (``tests/test_guarded_regex.py`` compares them on corner
cases, generated text and real sources).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from hooklint.lexical import word_before

_WORD_RUN = re.compile(r"\w+")


class Guarded:
    """``pattern`` with ``accepts(text, start)`` as its leading zero-width assertion;
    the ``re.Pattern`` methods the screen and the sparse text use (``findall`` gives
    group 1 when the pattern has a group, as ``re`` does).  ``pattern`` never matches
    the empty string, and where its match can start with a word character,
    ``accepts`` refuses every position that a word character precedes (``\\b``
    before a name, ``(?<![\\w.])``, ``(?<=\\bself\\.)``): a refused match is searched
    again past the word it starts with."""

    def __init__(self, pattern: str, accepts: Callable[[str, int], bool]) -> None:
        self.regex = re.compile(pattern)
        self.accepts = accepts

    def finditer(self, text: str) -> Iterator[re.Match]:
        search, accepts = self.regex.search, self.accepts
        position = 0
        while True:
            match = search(text, position)
            if match is None:
                return
            start = match.start()
            if accepts(text, start):
                yield match
                position = match.end()
            else:  # the positions inside the word it starts with are refused too
                run = _WORD_RUN.match(text, start)
                position = run.end() if run is not None else start + 1

    def findall(self, text: str) -> list[str]:
        group = 1 if self.regex.groups else 0
        return [m.group(group) for m in self.finditer(text)]

    def search(self, text: str) -> re.Match | None:
        return next(self.finditer(text), None)


def not_after_word(text: str, start: int) -> bool:
    r"""``\b`` before a name: no word character right before ``start``."""
    return not word_before(text, start)


def after_no_name_or_dot(text: str, start: int) -> bool:
    r"""``(?<![\w.])``: no word character and no ``.`` right before ``start``."""
    return start == 0 or not (text[start - 1] == "." or word_before(text, start))


def _after_word(text: str, start: int, word: str) -> bool:
    r"""``(?<=\bword)``: ``word`` ends at ``start``, with no word character before it."""
    begin = start - len(word)
    return begin >= 0 and text.startswith(word, begin) and not word_before(text, begin)


def after_no_self_or_cls(text: str, start: int) -> bool:
    r"""``(?<!\bself)(?<!\bcls)``; its patterns start with ``.``."""
    return not (_after_word(text, start, "self") or _after_word(text, start, "cls"))


def after_no_name_or_self_dot(text: str, start: int) -> bool:
    r"""``(?:(?<![\w.])|(?<=\bself\.)|(?<=\bcls\.))``: a name not after a word character
    or a dot, or right after ``self.``/``cls.``."""
    return (
        after_no_name_or_dot(text, start)
        or _after_word(text, start, "self.")
        or _after_word(text, start, "cls.")
    )


def names_alternation(names, capture: bool = False) -> str:
    """``(?:a|b|...)`` of the literal ``names`` (``capture``: ``(a|b|...)``, a group)."""
    return ("(" if capture else "(?:") + "|".join(re.escape(n) for n in names) + ")"
