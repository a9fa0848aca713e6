"""Lines, strings and comments of Python source, as CPython's tokenizer sees them.

*Lines* end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else: not at a form feed,
``\\v``, ``\\x1c``-``\\x1e``, ``\\x85`` or ``\\u2028``/``\\u2029`` (``str.splitlines``
breaks at all of those, so a string holding one would shift every line number
after it).  This is how CPython and libcst number lines, and every part of hooklint
that splits text into lines (``# noqa``, positions, the screen, the sparse text, the
source line shown in reports) uses :func:`split_lines`.

*Strings and comments* are found by :func:`scan`, an exact scanner: it reads the
text left to right from a code position, so a ``#`` inside a triple-quoted string
is string, and a quote inside a comment is comment; string prefixes are read as the
tokenizer reads them (a quote right after an identifier that is a valid prefix), and
f-strings are followed through their replacement fields (PEP 701 lets those hold
strings with the same quote, comments and nested f-strings).  It is meant for text
that parses (the engine scans only what ``ast.parse`` accepted); on anything else it
still ends, with spans of no particular meaning.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass
from typing import NamedTuple

#: A line break, as the tokenizer reads one.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
#: What ``str.splitlines`` breaks at and the tokenizer does not.
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _splitlines_agrees(text: str) -> bool:
    """Whether ``text`` holds none of :data:`_OTHER_BREAKS`: one substring search per
    character (each a fast scan of the text) costs a tenth of a regex character class."""
    return not any(character in text for character in _OTHER_BREAKS)


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """``text``'s lines; with ``keepends`` each keeps its line break and the last
    (possibly empty) line after a final break is not a line; without, a text ending
    in a line break ends in an empty line (``"a\\n"`` -> ``["a", ""]``), so that line
    ``n`` is ``lines[n - 1]`` for every position in the text."""
    if _splitlines_agrees(text):  # str.splitlines breaks where the tokenizer does: faster
        if keepends:
            return text.splitlines(keepends=True)
        lines = text.splitlines()
        if not text or text[-1] in "\r\n":
            lines.append("")
        return lines
    if keepends:
        return _LINE.findall(text)
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The offset in ``text`` where each line starts: 0, and just past each line break
    (from :func:`split_lines`' lengths: a match object per line costs several times more)."""
    lines = split_lines(text, keepends=True)
    starts = [0, *itertools.accumulate(map(len, lines))]
    if lines and lines[-1][-1:] not in ("\n", "\r"):
        starts.pop()  # the end of a last line without a break starts nothing
    return starts


def newline_of(text: str) -> str:
    """The file's line break (its first one; ``\\n`` when there is none), which is what
    libcst's ``Module.default_newline`` says too."""
    match = LINE_BREAK.search(text)
    return match.group(0) if match else "\n"


# -- strings and comments ---------------------------------------------------------------
_PREFIXES = frozenset({"r", "u", "b", "f", "br", "rb", "fr", "rf", "t", "tr", "rt"})
_INTERESTING = re.compile(r"[#'\"]")
_COMMENT_END = re.compile(r"\r|\n")
_BODY = {
    quote: re.compile(
        (r"(?:\\(?:\r\n|.)|[^\\])*?" if len(quote) == 3 else r"(?:\\(?:\r\n|.)|[^\\\r\n" + quote + "])*")
        + quote,
        re.DOTALL,
    )
    for quote in ("'''", '"""', "'", '"')
}
_F_LITERAL = re.compile(r"[^\\{}'\"\r\n]+")
_F_CODE = re.compile(r"[^\\{}()\[\]'\"#:\r\n]+")

COMMENT, STRING, FSTRING = "comment", "string", "fstring"


class Span(NamedTuple):
    """A comment or a string literal: ``text[start:end]`` (a tuple: a file holds
    hundreds of them, and a frozen dataclass costs four times as much to build)."""

    start: int
    end: int
    kind: str  # COMMENT, STRING or FSTRING


#: Whitespace, as ``str.isspace`` reads it.
_SPACE = re.compile(r"\s")


def is_prose(literal: str) -> bool:
    """Whether a string literal (its source text) holds whitespace: words for a reader
    (a message, documentation), never the name of an attribute."""
    return _SPACE.search(literal) is not None


def scan(text: str) -> list[Span]:
    """Every comment and string literal (an f-string as one span) of ``text``, in order."""
    spans: list[Span] = []
    append = spans.append
    search = _INTERESTING.search
    position = 0
    length = len(text)
    while True:
        match = search(text, position)
        if match is None:
            return spans
        start = match.start()
        character = text[start]
        if character == "#":
            end_of_line = _COMMENT_END.search(text, start)
            end = end_of_line.start() if end_of_line else length
            append(Span(start, end, COMMENT))
        elif start and (text[start - 1].isalnum() or text[start - 1] == "_"):  # a prefix, maybe
            prefix = _prefix_before(text, start)
            end = _string_end(text, start, prefix)
            append(Span(start - len(prefix), end, FSTRING if "f" in prefix.lower() else STRING))
        else:  # no prefix: _string_end's plain string, inline (most spans are these)
            if text.startswith(character * 3, start):
                end = _triple_quoted_end(text, start + 3, character * 3)
            else:
                body = _BODY[character].match(text, start + 1)
                end = body.end() if body else length
            append(Span(start, end, STRING))
        position = end


_BRACKETS = re.compile(r"[()\[\]{}]")
#: What masking a string or comment keeps: its line breaks.
_MASKED = {ord("\r"): "\r", ord("\n"): "\n"}


def logical_lines(text: str) -> list[str]:
    """The physical lines of ``text`` joined into logical ones, as Python reads them:
    a line inside brackets or a string literal, or ending in a backslash, continues on
    the next (brackets in strings and comments do not count: :func:`scan`).  Each
    logical line is its physical lines joined by spaces, their line breaks dropped."""
    pieces: list[str] = []
    position = 0
    multiline: list[tuple[int, int]] = []  # string literals over several lines
    for span in scan(text):
        pieces.append(text[position : span.start])
        body = text[span.start : span.end]
        pieces.append("".join(_MASKED.get(ord(c), " ") for c in body))
        if span.kind != COMMENT and ("\n" in body or "\r" in body):
            multiline.append((span.start, span.end))
        position = span.end
    pieces.append(text[position:])
    code = "".join(pieces)
    out: list[str] = []
    pending: list[str] = []
    depth = 0
    offset = 0
    for line, plain in zip(split_lines(text, keepends=True), split_lines(code, keepends=True)):
        end = offset + len(line.rstrip("\r\n"))
        offset += len(line)
        pending.append(line.rstrip("\r\n"))
        for bracket in _BRACKETS.findall(plain):
            depth += 1 if bracket in "([{" else -1
        depth = max(depth, 0)
        inside = any(start < end < stop for start, stop in multiline)
        if depth == 0 and not inside and not plain.rstrip().endswith("\\"):
            out.append(" ".join(pending))
            pending = []
    if pending:
        out.append(" ".join(pending))
    return out


def closing_bracket(code: str, opening: int, end: int | None = None) -> int:
    """The index of the bracket that closes the one at ``opening`` in ``code`` (whose
    strings and comments are blanked: every bracket is code), looking no further than
    ``end``; -1 when none does."""
    depth = 0
    for index in range(opening, len(code) if end is None else min(len(code), end)):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def word_before(text: str, index: int) -> bool:
    r"""Whether a word character (one ``\w`` matches) precedes ``index`` in ``text``:
    a name found at ``index`` would then be the tail of a longer one."""
    return index > 0 and (text[index - 1].isalnum() or text[index - 1] == "_")


def _prefix_before(text: str, quote: int) -> str:
    """The string prefix right before the quote at ``quote``: the identifier that ends
    there, if it is a prefix (``if"x"`` has none: ``if`` is a keyword)."""
    start = quote
    while quote - start < 3 and word_before(text, start):
        start -= 1
    word = text[start:quote]
    if word_before(text, start):
        return ""  # longer than any prefix
    return word if word.lower() in _PREFIXES else ""


def _quote_at(text: str, position: int) -> str:
    character = text[position]
    triple = character * 3
    return triple if text.startswith(triple, position) else character


def _string_end(text: str, start: int, prefix: str) -> int:
    """Where the string whose opening quote is at ``start`` ends (just past its closing quote)."""
    quote = _quote_at(text, start)
    body = start + len(quote)
    if "f" in prefix.lower() or "t" in prefix.lower():
        return _fstring_end(text, body, quote, "r" in prefix.lower())
    if len(quote) == 3:
        return _triple_quoted_end(text, body, quote)
    match = _BODY[quote].match(text, body)
    return match.end() if match else len(text)


def _triple_quoted_end(text: str, body: int, quote: str) -> int:
    """Where ``_BODY[quote]`` (a triple quote) ends its match at ``body``, found by
    searching for the quote: the first occurrence that no escaping backslash precedes
    (an odd run of them: each escapes the character after it) closes the string.  Its
    lazy regex steps through a docstring one character at a time, twenty times
    slower."""
    position = body
    while True:
        found = text.find(quote, position)
        if found < 0:
            return len(text)
        before = found
        while before > position and text[before - 1] == "\\":
            before -= 1
        if (found - before) % 2 == 0:
            return found + 3
        position = found + 1


def _fstring_end(text: str, position: int, quote: str, raw: bool) -> int:
    """Past the closing quote of an f-string whose body starts at ``position``."""
    length = len(text)
    while position < length:
        literal = _F_LITERAL.match(text, position)
        if literal:
            position = literal.end()
            continue
        character = text[position]
        if character == "\\":
            following = text[position + 1 : position + 2]
            if not raw and following == "N" and text.startswith("{", position + 2):
                close = text.find("}", position)  # \N{NAME}: no replacement field
                position = close + 1 if close >= 0 else length
            elif following in ("{", "}") or (raw and following not in ("\\", "'", '"')):
                position += 1
            else:
                position += 2 if text[position + 1 : position + 3] != "\r\n" else 3
        elif text.startswith(quote, position):
            return position + len(quote)
        elif character == "{":
            if text.startswith("{{", position):
                position += 2
            else:
                position = _field_end(text, position + 1, quote, raw)
        elif character in "\r\n" and len(quote) == 1:
            return position  # unterminated (does not parse)
        else:  # "}", a "}}", or a quote that is not this string's
            position += 1
    return length


def _field_end(text: str, position: int, quote: str, raw: bool) -> int:
    """Past the ``}`` that closes a replacement field whose expression starts at ``position``."""
    depth = 0
    length = len(text)
    while position < length:
        code = _F_CODE.match(text, position)
        if code:
            position = code.end()
            continue
        character = text[position]
        if character in "([{":
            depth += 1
        elif character in ")]}":
            if depth == 0:
                return position + 1
            depth -= 1
        elif character in "'\"":
            prefix = _prefix_before(text, position)
            position = _string_end(text, position, prefix)
            continue
        elif character == "#":
            end_of_line = _COMMENT_END.search(text, position)
            position = end_of_line.start() if end_of_line else length
            continue
        elif character == ":" and depth == 0:
            return _spec_end(text, position + 1, quote, raw)
        position += 1
    return length


def _spec_end(text: str, position: int, quote: str, raw: bool) -> int:
    """Past the ``}`` that closes a format spec starting at ``position``."""
    length = len(text)
    while position < length:
        literal = _F_LITERAL.match(text, position)
        if literal:
            position = literal.end()
            continue
        character = text[position]
        if character == "}":
            return position + 1
        if character == "{":
            position = _field_end(text, position + 1, quote, raw)
        elif character == "\\":
            position += 2
        elif text.startswith(quote, position):
            return position  # the string ends first (does not parse)
        else:
            position += 1
    return length


def names_a_registration(literal: str) -> bool:
    """Whether a plain string literal (its source text) may name a registration method:
    ``getattr(m, "register_forward_hook")``, which the facts read as one (an identifier
    holding ``register_`` and ``hook``)."""
    if "register_" not in literal or "hook" not in literal:
        return False
    body = literal.lstrip("rRbBuU")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return body.endswith(quote) and body[len(quote) : -len(quote)].isidentifier()


@dataclass
class Lexed:
    """A text's lines, its code with strings and comments blanked (f-strings kept: a
    name built there is code; so is a plain string that names a registration method,
    :func:`names_a_registration`; blanking keeps every offset and line break), and which
    lines a string literal covers."""

    lines: list[str]  # with their line breaks
    offsets: list[int]  # where each line starts, and the text's length last
    code_text: str  # the text, strings and comments blanked
    #: 1 for each line (0-based index) that a string literal starts on, ends on, or spans.
    in_string: bytearray
    #: The comments and string literals (:func:`scan`).
    spans: list[Span]

    def code(self, numbers) -> str:
        """Lines ``numbers`` (1-based) of the code, strings and comments blanked."""
        offsets, code = self.offsets, self.code_text
        return "".join(code[offsets[n - 1] : offsets[n]] for n in numbers)

    def droppable(self, index: int) -> bool:
        """Whether line ``index`` (0-based) holds nothing but blanks and a comment."""
        if self.in_string[index]:
            return False
        return not self.code_text[self.offsets[index] : self.offsets[index + 1]].strip(" \t\f\r\n")


_SPLIT_KEEPING_BREAKS = re.compile(r"(\r\n|\r|\n)")


def lex(text: str) -> Lexed:
    lines = split_lines(text, keepends=True)
    offsets = [0, *itertools.accumulate(map(len, lines))]
    spans = scan(text)
    in_string = bytearray(len(lines))
    if not spans:
        return Lexed(lines, offsets, text, in_string, spans)
    pieces = []
    cursor = 0
    last_line = len(lines) - 1
    for span in spans:
        pieces.append(text[cursor : span.start])
        chunk = text[span.start : span.end]
        multiline = "\n" in chunk or "\r" in chunk
        if span.kind == FSTRING or (span.kind == STRING and names_a_registration(chunk)):
            pieces.append(chunk)
        elif multiline:  # blanks, keeping the line breaks
            pieces.extend(
                part if index % 2 else " " * len(part)
                for index, part in enumerate(_SPLIT_KEEPING_BREAKS.split(chunk))
            )
        else:
            pieces.append(" " * len(chunk))
        if span.kind != COMMENT:
            first = bisect.bisect_right(offsets, span.start) - 1
            if multiline:
                last = min(bisect.bisect_right(offsets, max(span.start, span.end - 1)) - 1, last_line)
                in_string[first : last + 1] = b"\x01" * (last - first + 1)
            else:
                in_string[first] = 1
        cursor = span.end
    pieces.append(text[cursor:])
    return Lexed(lines, offsets, "".join(pieces), in_string, spans)


def first_line(message: str) -> str:
    """The first line of an error message, for the one-line errors on stderr."""
    lines = split_lines(message.strip())
    return lines[0] if lines and lines[0] else "(no message)"
