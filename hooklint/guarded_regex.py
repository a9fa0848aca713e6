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
cases, generated text and real sources).  A name followed by ``(`` is found faster
still in the reversed text (:class:`CalledNames`).
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


class CalledNames:
    r"""The names followed by ``(`` (``[A-Za-z_][A-Za-z0-9_]*\s*\(``) that what
    precedes them allows, searched in the reversed text: there the pattern starts with
    the literal ``(`` and the engine jumps from one parenthesis to the next, where
    :class:`Guarded` would try the name at every character of every word (twice as
    slow as the look-behind regex on a module full of names).  ``before`` is the
    condition on what precedes the name, written for the reversed text: a look-ahead
    (:data:`NO_NAME_OR_DOT`, :data:`NO_NAME_OR_SELF_DOT`).  The matches of ``(\s*name``
    cannot overlap, so the reversed search finds the same ones, listed in the order
    of the text."""

    def __init__(self, before: str) -> None:
        self.regex = re.compile(r"\(\s*([A-Za-z0-9_]*[A-Za-z_])" + before)

    def findall(self, text: str) -> list[str]:
        found = self.regex.findall(text[::-1])
        found.reverse()
        return [name[::-1] for name in found]


#: ``(?<![\w.])`` as :class:`CalledNames` reads it (the reversed text's look-ahead).
NO_NAME_OR_DOT = r"(?![\w.])"
#: ``(?:(?<![\w.])|(?<=\bself\.)|(?<=\bcls\.))``, reversed.
NO_NAME_OR_SELF_DOT = r"(?:(?![\w.])|(?=\.fles(?!\w))|(?=\.slc(?!\w)))"


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


def names_alternation(names, capture: bool = False) -> str:
    """``(?:a|b|...)`` of the literal ``names`` (``capture``: ``(a|b|...)``, a group)."""
    return ("(" if capture else "(?:") + "|".join(re.escape(n) for n in names) + ")"
