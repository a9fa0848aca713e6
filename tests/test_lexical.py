"""The scanner of strings and comments (hooklint/lexical.py) reads every text as the
plain regex reader it replaced did: a ``#`` to the end of its line, each literal from
its prefix to its closing quote by its quote's body regex, an f-string through its
replacement fields.  The reader below is that reference; the scanner finds a triple
quote's end by searching for the quote and reads a literal without a prefix inline."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hooklint.lexical import COMMENT, FSTRING, STRING, _fstring_end, _prefix_before, scan

_INTERESTING = re.compile(r"[#'\"]")
_BODY = {
    quote: re.compile(
        (r"(?:\\(?:\r\n|.)|[^\\])*?" if len(quote) == 3 else r"(?:\\(?:\r\n|.)|[^\\\r\n" + quote + "])*")
        + quote,
        re.DOTALL,
    )
    for quote in ("'''", '"""', "'", '"')
}


def _reference(text: str) -> list[tuple[int, int, str]]:
    spans, position = [], 0
    while (match := _INTERESTING.search(text, position)) is not None:
        start = match.start()
        if text[start] == "#":
            line_end = re.compile(r"\r|\n").search(text, start)
            end = line_end.start() if line_end else len(text)
            spans.append((start, end, COMMENT))
        else:
            prefix = _prefix_before(text, start)
            quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
            if "f" in prefix.lower() or "t" in prefix.lower():
                end = _fstring_end(text, start + len(quote), quote, "r" in prefix.lower())
            else:
                body = _BODY[quote].match(text, start + len(quote))
                end = body.end() if body else len(text)
            spans.append((start - len(prefix), end, FSTRING if "f" in prefix.lower() else STRING))
        position = end
    return spans


_PIECES = st.sampled_from(
    [
        "'",
        '"',
        "'''",
        '"""',
        "\\",
        "\\\\",
        "\n",
        "\r\n",
        "\r",
        "#",
        "f",
        "rb",
        "t",
        "if",
        "x",
        "_",
        "{",
        "}",
        " ",
        ":",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_PIECES, max_size=16).map("".join))
def test_the_scanner_reads_as_the_regex_reader(text):
    assert [tuple(span) for span in scan(text)] == _reference(text)


def test_the_scanner_on_escapes_before_a_triple_quote():
    cases = ['"""a\\""""', '"""a\\\\"""x"', "'''\\''''", "x = '''open\n", 'r"""\\""" """', '"""\\\r\n"""']
    for text in cases:
        assert [tuple(span) for span in scan(text)] == _reference(text), text


def test_a_string_holding_whitespace_is_prose():
    from hooklint.lexical import is_prose

    assert is_prose('"use register_forward_hook"')
    assert is_prose('"""\nregister_forward_hook\n"""')
    assert is_prose('"tab\there"')
    assert not is_prose('"register_forward_hook"')
    assert not is_prose("'a\\nb'")  # an escape sequence is two characters of source
