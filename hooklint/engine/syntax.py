"""HL000: a file that does not parse is one violation, where the parser stopped; a
file named on the command line without any hook token is only compiled by CPython."""

from __future__ import annotations

from hooklint.engine.parse import python_ast
from hooklint.lexical import split_lines
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
    """HL000 when CPython does not compile ``text`` (and HL000 is among ``rules``:
    rule classes, or codes)."""
    if not any(getattr(rule, "code", rule) == "HL000" for rule in rules):
        return []
    if _compiles(text, path):
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


def _compiles(text: str, filename: str) -> bool:
    """Whether CPython compiles ``text`` to bytecode: then it parses too.  A third
    faster than building its AST (no Python objects per node); a file that does not
    compile (or compiles with an error only the compiler sees, such as ``return``
    outside a function) is asked again as :func:`python_ast`, whose answer stands."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", dont_inherit=True)
    except Exception:  # SyntaxError, ValueError (NUL bytes), RecursionError, MemoryError...
        return False
    return True
