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


def text_outline(text: str, marks: bool = False) -> dict | None:
    """The outline CPython's AST gives for ``text`` (no ``hooky`` marks: for a module
    without hook text), or None when this reader is not sure of it.  ``marks``: with
    ``hooky`` marks that include every mark the parsed outline has (and may add
    some; :func:`_mark_hooky`)."""
    try:
        return _read(text, marks)
    except _Unsure:
        return None


def _masked(text: str, spans: list) -> tuple[str, set[int]]:
    """``text`` with comments blanked and string literals turned into ``_`` (each
    line break kept as one ``\\n``), and the lines (0-based) that start inside a
    literal: they continue the statement before them."""
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


def _read(text: str, marks: bool = False) -> dict:
    spans = scan(text)
    masked, inside = _masked(text, spans)
    # With ``marks``: each def read, for its ``hooky`` mark: (its group of siblings,
    # name, entry, first line of its body, then the last line of its region); the
    # region of the def last begun at each depth of the stack ends where the stack
    # next drops below it.
    defs: list[list] = []
    open_defs: list[tuple[int, list]] = []  # (stack depth of the def's frame, its record)
    imports: dict[str, list] = {}
    classes: dict[str, dict] = {}
    functions: dict[str, dict] = {}
    stack: list[tuple[int, object]] = []  # (indentation of a block's header, what its body is)
    last: dict[int, str] = {}  # the compound statement last begun at an indentation, in a read context
    decorators: list[str] = []
    skip: list = [None]  # the header indentation of the skipped block the next line may be in
    lines = split_lines(masked, keepends=True)

    def track(owner, name: str, entry: dict, code: str, line: int, end: int) -> None:
        if marks:
            record = [owner, name, entry, _body_start(code, line, end)]
            defs.append(record)
            open_defs.append((len(stack) - 1, record))

    def statement(line: int, indent: int, code: str, end: int) -> None:
        while stack and indent <= stack[-1][0]:
            stack.pop()
        while open_defs and open_defs[-1][0] >= len(stack):
            open_defs.pop()[1].append(line - 1)  # its region's last line
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
                track(None, name, functions[name], code, line, end)
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
                owner = classes[context[1]]
                owner["methods"][name] = {"line": line, "params": params}
                stack.append((indent, "skip"))
                track(id(owner), name, owner["methods"][name], code, line, end)
            elif header or word in ("class", *_READ_BLOCKS, *_SKIPPED_BLOCKS):
                stack.append((indent, "skip"))
            decorators.clear()

    for line, indent, code, end in _logical(lines, inside, skip):
        statement(line, indent, code, end)
        skip[0] = stack[-1][0] if stack and stack[-1][1] == "skip" else None
    for _, record in open_defs:
        record.append(len(lines))
    if marks:
        from hooklint.project.summary import hook_code

        code = split_lines(hook_code(text, spans), keepends=True)
        _mark_hooky(defs, split_lines(text, keepends=True), lines, inside, code)
    return {"imports": imports, "classes": classes, "functions": functions}


def _body_start(code: str, line: int, end: int) -> int:
    """The first line (1-based) of a def's body: the line after its header (which
    ends on line ``end``), or the header's last line when the body follows its
    colon there (``def f(): return 1``)."""
    colon = _header_colon(code)
    if colon >= 0 and code[colon + 1 :].strip():
        return end
    return end + 1


def _header_colon(code: str) -> int:
    """The index of the colon that ends a def header's signature (outside brackets)."""
    depth = 0
    for index, char in enumerate(code):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0:
            return index
    return -1


def _mark_hooky(
    defs: list[list], lines: list[str], masked: list[str], inside: set[int], code: list[str]
) -> None:
    """Mark ``hooky`` every def whose region (its body's lines to the line before the
    next statement at its indentation or less, a docstring that another statement
    follows left out) holds a registration or removal token in ``code`` (the lines
    of :func:`hooklint.project.summary.hook_code`), and then every def of
    the same class or module level that calls one of those by name (the parsed
    outline's one-call-deep spread).  The region holds the whole body that the
    parsed outline reads (:func:`hooklint.project.summary._body_text`, from the
    statement after the docstring to the body's last line), and more (the lines of
    trailing comments, a docstring that is the only statement, a one-line body's header):
    every mark the parse gives is here; an extra one only costs the hook facts of
    the module being computed, and those are computed from the parse."""
    from hooklint.project.summary import calls_of, has_hook_text

    regions: dict[tuple, list[str]] = {}
    for owner, name, _entry, start, last in defs:
        start = _after_docstring(start, last, lines, masked, inside)
        regions.setdefault((owner, name), []).append("".join(code[start - 1 : last]))
    hooky: dict[object, set[str]] = {}
    for (owner, name), texts in regions.items():
        if any(has_hook_text(t) for t in texts):
            hooky.setdefault(owner, set()).add(name)
    for owner, names in hooky.items():
        calls = calls_of(sorted(names))
        for (group, name), texts in regions.items():
            if group == owner and name not in names and any(calls.search(t) for t in texts):
                names.add(name)  # one call deep: the spread reads the first marks only
    marked = {(owner, name) for owner, names in hooky.items() for name in names}
    for owner, name, entry, *_ in defs:
        if (owner, name) in marked:
            entry["hooky"] = True


def _after_docstring(start: int, last: int, lines: list[str], masked: list[str], inside: set[int]) -> int:
    """``start``, or the line after the docstring that begins the body there when
    another statement follows it within the region (CPython's docstring: one plain
    string literal, alone in its statement)."""
    first = start - 1
    while first < last and not masked[first].strip():
        first += 1
    if first >= last or first in inside:
        return start
    code = masked[first].strip()
    if not code or code.strip("_"):
        return start  # not a string literal alone
    literal = lines[first].lstrip()
    quote = min((i for i in (literal.find('"'), literal.find("'")) if i >= 0), default=-1)
    if quote < 0 or literal[:quote].lower() not in ("", "r", "u"):
        return start  # a bytes or f-string literal is no docstring
    after = first + 1
    while after in inside:
        after += 1
    if any(masked[i].strip().strip("_") for i in range(first + 1, after)):
        return start  # the literal goes on into an expression (``"""...""".format(x)``)
    if masked[after - 1].rstrip().endswith("\\"):
        return start
    following = after
    while following < last and not masked[following].strip():
        following += 1
    if following >= last:
        return start  # the docstring is the only statement: the outline reads it
    return after + 1


def _logical(lines: list[str], inside: set[int], skip: list):
    """``(line number, indentation, code, last line number)`` of each logical line that holds code: a
    line joins the one before it inside brackets, after a backslash, and where it
    starts inside a string literal (``lines`` keep their breaks).

    While the caller is in a skipped block (``skip[0]``: the indentation of its
    header), the lines up to the next one indented no deeper than the header are
    passed over at once when they close every bracket they open, end in no
    backslash, and hold no tab or form feed (else they are read one by one; after a
    failed try the next comes twice as many lines later as the last, so that a long
    block that cannot be passed over is not measured again at each of its lines)."""
    number, count = 0, len(lines)
    text = "".join(lines)
    offsets = [0, *itertools.accumulate(map(len, lines))]
    jumps = "\r" not in text
    retry_at, gap, tried_for = 0, 1, None
    while number < count:
        if skip[0] != tried_for:  # another block: try at once
            retry_at, gap, tried_for = 0, 1, skip[0]
        if skip[0] is not None and jumps and number >= retry_at:
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
                number, gap = end, 1
                if number >= count:
                    return
            else:
                retry_at, gap = number + gap, gap * 2
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
        yield start + 1, indent, " ".join(pieces).strip(), number


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
