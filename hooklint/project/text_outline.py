"""The outline of a module without hook text, read from its text instead of parsed.

Resolution reads the outline (imports, classes with their bases and methods,
functions with their parameters: :func:`hooklint.project.summary.summarise` with
``hook_facts=False``) of every module a class hierarchy or an import chain passes
through, and most of those modules hold no registration or removal token: their
outline has no ``hooky`` mark, and CPython's parser is most of its cost.  This
reader builds the same outline from the text: strings and comments blanked
(:func:`hooklint.lexical.scan`), lines joined into logical lines (open brackets,
backslashes, strings that span lines), and the statements the outline takes
followed by their indentation: module level through ``if``/``elif``/``else`` and
``try``/``except``/``else`` blocks (not ``finally``, loops, ``with`` or ``match``),
and a class's own ``def`` statements.

It answers None (the caller parses) for what it does not follow exactly: tabs or
form feeds in indentation, ``;`` or a one-line ``if``/``try`` block where the outline
reads, ``except*``, type parameters, a parenthesised
base, an identifier that is not ASCII (CPython normalises those), an indentation or
bracket it cannot place.  A text that CPython would reject may still get an outline
here (the parse would give an empty one); such a module is not importable either,
and holding no hook text it is never a registration wrapper or a removal helper.
``tests/test_text_outline.py`` checks that it equals the parsed outline, key order
included, on tricky programs and on real trees.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re

from hooklint.lexical import COMMENT, LINE_BREAK, closing_bracket, scan, split_lines

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"{_NAME}(?:\s*\.\s*{_NAME})*")
_FIRST_WORD = re.compile(r"[A-Za-z_]\w*")
_DEF = re.compile(rf"(?:async\s+)?def\s+({_NAME})\s*")
_CLASS = re.compile(rf"class\s+({_NAME})\s*")
_PARAM = re.compile(rf"({_NAME})\s*(?::|=|$)")
_KEYWORD_ARG = re.compile(rf"{_NAME}\s*=(?!=)")
_IMPORT_ALIAS = re.compile(rf"\s*({_DOTTED.pattern})\s*(?:\bas\s+({_NAME}))?\s*")
_FROM_ALIAS = re.compile(rf"\s*(\*|{_NAME})\s*(?:\bas\s+({_NAME}))?\s*")
_IMPORT_WORD = re.compile(r"(?<![\w.])import(?!\w)")
_EXCEPT_STAR = re.compile(r"except\s*\*")
_LAMBDA = re.compile(r"(?<![\w.])lambda(?!\w)")

#: Compound statements whose body the outline reads at module level, and those it skips.
_READ_BLOCKS = frozenset({"if", "elif", "else", "try", "except"})
_SKIPPED_BLOCKS = frozenset({"for", "while", "with", "finally", "async", "match", "case"})


class _Unsure(Exception):
    """The text holds something this reader does not follow exactly."""


def text_outline(text: str) -> dict | None:
    """The outline CPython's AST gives for ``text`` (no ``hooky`` marks: for a module
    without hook text), or None when this reader is not sure of it."""
    try:
        return _read(text)
    except _Unsure:
        return None


def _masked(text: str) -> tuple[str, set[int]]:
    """``text`` with comments blanked and string literals turned into ``_`` (each
    line break kept as one ``\\n``), and the lines (0-based) that start inside a
    literal: they continue the statement before them."""
    spans = scan(text)
    if not spans:
        return text, set()
    pieces: list[str] = []
    inside: set[int] = set()
    cursor = 0
    line = 0  # the line of ``cursor``
    for span in spans:
        before = text[cursor : span.start]
        line += _breaks(before)
        pieces.append(before)
        chunk = text[span.start : span.end]
        if span.kind == COMMENT:
            pieces.append(" " * len(chunk))
        elif "\n" in chunk or "\r" in chunk:
            parts = LINE_BREAK.split(chunk)
            pieces.append("\n".join("_" * len(p) for p in parts))
            inside.update(range(line + 1, line + len(parts)))
            line += len(parts) - 1
        else:
            pieces.append("_" * len(chunk))
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces), inside


def _breaks(text: str) -> int:
    if "\r" not in text:
        return text.count("\n")
    return len(LINE_BREAK.findall(text))


def _read(text: str) -> dict:
    masked, inside = _masked(text)
    imports: dict[str, list] = {}
    classes: dict[str, dict] = {}
    functions: dict[str, dict] = {}
    stack: list[tuple[int, object]] = []  # (indentation of a block's header, what its body is)
    last: dict[int, str] = {}  # the compound statement last begun at an indentation, in a read context
    decorators: list[str] = []
    skip: list = [None]  # the header indentation of the skipped block the next line may be in
    lines = split_lines(masked, keepends=True)

    def statement(line: int, indent: int, code: str) -> None:
        while stack and indent <= stack[-1][0]:
            stack.pop()
        if not stack and indent > 0:
            raise _Unsure
        context = stack[-1][1] if stack else "module"
        if context == "skip":
            return
        word_match = _FIRST_WORD.match(code)
        word = word_match.group() if word_match else ""
        header = code.endswith(":")
        if ";" in code:
            raise _Unsure
        if code.startswith("@"):
            decorators.append(code[1:].strip())
            return
        is_def = word == "def" or (word == "async" and re.match(r"async\s+def\b", code) is not None)
        if context == "module":
            for key in [k for k in last if k > indent]:
                del last[key]
            if is_def:
                name, params = _def(code)
                functions[name] = {"line": line, "params": params}
                stack.append((indent, "skip"))
            elif word == "class":
                name, bases = _class(code)
                classes[name] = {"line": line, "bases": bases, "methods": {}}
                stack.append((indent, ("class", name)))
            elif word == "import":
                _import(code, imports)
            elif word == "from":
                _from_import(code, imports)
            elif word in _READ_BLOCKS:
                if not header or _EXCEPT_STAR.match(code):
                    raise _Unsure
                before = last.get(indent)
                if word in ("if", "try"):
                    last[indent] = word
                    stack.append((indent, "module"))
                elif word == "elif":
                    if before != "if":
                        raise _Unsure
                    stack.append((indent, "module"))
                elif word == "except":
                    if before != "try":
                        raise _Unsure
                    stack.append((indent, "module"))
                elif before in ("if", "try"):  # else
                    stack.append((indent, "module"))
                elif before == "loop":
                    stack.append((indent, "skip"))
                else:
                    raise _Unsure
            elif header or word in _SKIPPED_BLOCKS:
                if word in ("for", "while") or (word == "async" and re.match(r"async\s+for\b", code)):
                    last[indent] = "loop"
                elif word == "finally":
                    pass
                else:
                    last[indent] = "other"
                stack.append((indent, "skip"))
            decorators.clear()
        else:  # a class's body
            if is_def:
                name, params = _def(code)
                static = "staticmethod" in decorators
                if not static and params:
                    params = params[1:]
                classes[context[1]]["methods"][name] = {"line": line, "params": params}
                stack.append((indent, "skip"))
            elif header or word in ("class", *_READ_BLOCKS, *_SKIPPED_BLOCKS):
                stack.append((indent, "skip"))
            decorators.clear()

    for line, indent, code in _logical(lines, inside, skip):
        statement(line, indent, code)
        skip[0] = stack[-1][0] if stack and stack[-1][1] == "skip" else None
    return {"imports": imports, "classes": classes, "functions": functions}


def _logical(lines: list[str], inside: set[int], skip: list):
    """``(line number, indentation, code)`` of each logical line that holds code: a
    line joins the one before it inside brackets, after a backslash, and where it
    starts inside a string literal (``lines`` keep their breaks).

    While the caller is in a skipped block (``skip[0]``: the indentation of its
    header), the lines up to the next one indented no deeper than the header are
    passed over at once when they close every bracket they open, end in no
    backslash, and hold no tab or form feed (else they are read one by one)."""
    number, count = 0, len(lines)
    text = "".join(lines)
    offsets = [0, *itertools.accumulate(map(len, lines))]
    jumps = "\r" not in text
    while number < count:
        if skip[0] is not None and jumps:
            found = _dedent(skip[0]).search(text, offsets[number] - 1)  # this line's break on
            end = bisect.bisect_left(offsets, found.end()) if found else count
            region = text[offsets[number] : offsets[end]]
            if (
                _depth(region) == 0
                and "\t" not in region
                and "\f" not in region
                and not region.rstrip().endswith("\\")
                and end not in inside
            ):
                number = end
                if number >= count:
                    return
        line = lines[number]
        stripped = line.strip()
        if not stripped:
            number += 1
            continue
        body = line.lstrip(" ")
        if body[:1].isspace():  # a tab or a form feed in the indentation
            raise _Unsure
        start, indent = number, len(line) - len(body)
        pieces = [stripped]
        depth = _depth(stripped)
        while depth > 0 or pieces[-1].endswith("\\") or number + 1 in inside:
            if pieces[-1].endswith("\\"):
                pieces[-1] = pieces[-1][:-1]
            number += 1
            if number >= count:
                raise _Unsure
            piece = lines[number].strip()
            pieces.append(piece)
            depth += _depth(piece)
        if depth < 0:
            raise _Unsure
        number += 1
        yield start + 1, indent, " ".join(pieces).strip()


@functools.lru_cache(maxsize=64)
def _dedent(indent: int) -> re.Pattern:
    """The start of the next line that holds code indented at most ``indent`` spaces
    (the match is the line break before it)."""
    return re.compile(rf"\n(?= {{0,{indent}}}[^\s])")


def _depth(code: str) -> int:
    """How many more brackets ``code`` opens than it closes."""
    return (
        code.count("(")
        + code.count("[")
        + code.count("{")
        - code.count(")")
        - code.count("]")
        - code.count("}")
    )


def _split(inner: str) -> list[str]:
    """``inner`` split at its commas outside brackets and outside a ``lambda``'s
    parameters (``key=lambda a, b: a``: one piece)."""
    parts, depth, start = [], 0, 0
    in_lambda = False
    lambdas = [m.start() for m in _LAMBDA.finditer(inner)] if "lambda" in inner else []
    for index, char in enumerate(inner):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            if char == "," and not in_lambda:
                parts.append(inner[start:index])
                start = index + 1
            elif char == ":":
                in_lambda = False
            elif char == "l" and index in lambdas:
                in_lambda = True
    parts.append(inner[start:])
    return [p.strip() for p in parts]


def _closing(code: str, opening: int) -> int:
    """The index of the bracket that closes the one at ``opening``."""
    index = closing_bracket(code, opening)
    if index < 0:
        raise _Unsure
    return index


def _def(code: str) -> tuple[str, list[str]]:
    match = _DEF.match(code)
    if match is None or match.end() >= len(code) or code[match.end()] != "(":
        raise _Unsure
    opening = match.end()
    inner = code[opening + 1 : _closing(code, opening)]
    params = []
    for piece in _split(inner):
        if not piece or piece in ("*", "/") or piece.startswith("*"):
            continue
        found = _PARAM.match(piece)
        if found is None:
            raise _Unsure
        params.append(found.group(1))
    return match.group(1), params


def _class(code: str) -> tuple[str, list[str]]:
    match = _CLASS.match(code)
    if match is None:
        raise _Unsure
    rest = code[match.end() :]
    if rest.startswith(":"):
        return match.group(1), []
    if not rest.startswith("("):
        raise _Unsure  # type parameters, or something else
    opening = match.end()
    bases = []
    for piece in _split(code[opening + 1 : _closing(code, opening)]):
        if not piece or piece.startswith("*") or _KEYWORD_ARG.match(piece):
            continue
        if piece.startswith("("):
            raise _Unsure
        base = _dotted(piece)
        if base is not None:
            bases.append(base)
    return match.group(1), bases


def _dotted(piece: str) -> str | None:
    """What :func:`hooklint.project.summary._dotted` gives for the base ``piece``: its
    dotted name, one subscript (``Generic[T]``) left out; None for anything else."""
    if not piece.isascii():
        raise _Unsure
    subscript = piece.find("[")
    if subscript >= 0:
        if _closing(piece, subscript) != len(piece) - 1:
            return None
        piece = piece[:subscript].rstrip()
    found = _DOTTED.fullmatch(piece)
    if found is None:
        return None
    return ".".join(part.strip() for part in piece.split("."))


def _import(code: str, imports: dict) -> None:
    for alias in code[len("import") :].split(","):
        found = _IMPORT_ALIAS.fullmatch(alias)
        if found is None or not alias.isascii():
            raise _Unsure
        name = "".join(found.group(1).split())
        if found.group(2):
            imports[found.group(2)] = [name, None, 0]
        else:
            top = name.split(".", 1)[0]
            imports[top] = [top, None, 0]


def _from_import(code: str, imports: dict) -> None:
    if not code.isascii():
        raise _Unsure
    rest = code[len("from") :]
    keyword = _IMPORT_WORD.search(rest)
    if keyword is None:
        raise _Unsure
    source = "".join(rest[: keyword.start()].split())
    level = len(source) - len(source.lstrip("."))
    module = source[level:]
    if module and _DOTTED.fullmatch(module) is None:
        raise _Unsure
    names = rest[keyword.end() :].strip()
    if names.startswith("("):
        if not names.endswith(")"):
            raise _Unsure
        names = names[1:-1]
    aliases = names.split(",")
    if len(aliases) > 1 and not aliases[-1].strip():
        aliases.pop()  # a trailing comma
    for alias in aliases:
        found = _FROM_ALIAS.fullmatch(alias)
        if found is None:
            raise _Unsure
        name, local = found.group(1), found.group(2)
        if name == "*":
            imports[f"*{sum(1 for k in imports if k.startswith('*')) + 1}"] = [module, "*", level]
        else:
            imports[local or name] = [module, name, level]
