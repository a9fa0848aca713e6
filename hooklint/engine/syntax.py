"""HL000: a file that does not parse is one violation, where the parser stopped; a
file named on the command line without any hook token is only parsed by CPython."""

from __future__ import annotations

from hooklint.engine.parse import python_ast
from hooklint.lexical import split_lines
from hooklint.quick_parse import parses
from hooklint.violation import Location, Violation


def _cpython_syntax_error(exc: SyntaxError, path: str, text: str) -> Violation:
    lines = split_lines(text)
    line = max(1, min(exc.lineno or 1, len(lines)))
    column = max(1, exc.offset or 1)
    return _syntax_violation(path, line, column, f"syntax error: {exc.msg}", lines[line - 1])


def _syntax_error(exc, path: str, text: str) -> Violation:
    line = max(1, exc.raw_line)
    column = max(1, exc.raw_column + 1)
    lines = split_lines(text)
    source_line = lines[line - 1] if line <= len(lines) else ""
    message = str(exc.message if hasattr(exc, "message") else exc).splitlines()[0]
    return _syntax_violation(path, line, column, f"syntax error: {message}", source_line)


def _syntax_violation(path, line, column, message, source_line) -> Violation:
    here = Location(line, column)
    return Violation("HL000", "syntax-error", message, path, here, here, source_line=source_line)


def syntax_check(text: str, path: str, rules) -> list[Violation]:
    """HL000 when CPython does not parse ``text`` (and HL000 is among ``rules``:
    rule classes, or codes): its AST's verdict, asked only of a text that
    :func:`~hooklint.quick_parse.parses` refuses (one it accepts parses)."""
    if not any(getattr(rule, "code", rule) == "HL000" for rule in rules):
        return []
    if parses(text, path):  # the common case, at the cost of a parse
        return []
    try:
        python_ast(text, path)
    except SyntaxError as exc:
        return [_cpython_syntax_error(exc, path, text)]
    except (RecursionError, MemoryError):
        return [_syntax_violation(path, 1, 1, "cannot parse: too deeply nested to analyse", "")]
    except ValueError:
        pass
    return []
