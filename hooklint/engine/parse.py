"""The two parsers: CPython's (first: it has guards against deep nesting, and its
AST's statement spans let the screen and the sparse text skip definitions) and
libcst's, without the per-node validation a tree built by hand needs."""

from __future__ import annotations

import ast


def parse_module(code: str):
    """``libcst.parse_module`` without the per-node validation.

    Each libcst node checks its fields when built (``CSTNode.__post_init__``), a
    guard for trees built by hand that costs a quarter of a parse; what the parser
    builds from source is valid by construction (libcst's own comment there says the
    check belongs elsewhere for that reason).  Nodes built while this runs, in any
    thread, skip the check."""
    import libcst
    from libcst._nodes.base import CSTNode

    original = CSTNode.__dict__.get("__post_init__")
    if original is None:  # a libcst without the hook: parse as it is
        return libcst.parse_module(code)
    CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
    try:
        return libcst.parse_module(code)
    finally:
        CSTNode.__post_init__ = original  # type: ignore[method-assign]


def _unchecked(self) -> None:
    pass


def _cpython_parse(text: str):
    """Parse with CPython first: libcst's native parser overflows its stack (a
    segfault, not an exception) on very deeply nested input, and CPython's parser has
    guards.  Returns the ``ast.Module`` when the code parses (its statement spans let
    :mod:`hooklint.sparse` skip irrelevant definitions), ``("deep", line)`` when
    CPython gives up on nesting, the
    SyntaxError when the code does not parse (only used if libcst agrees: libcst may
    accept newer syntax than the running Python), else None."""
    try:
        return python_ast(text)
    except (RecursionError, MemoryError):
        return ("deep", 1)
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg) or "too complex" in str(exc.msg):
            return ("deep", exc.lineno or 1)
        return exc
    except ValueError:
        pass
    return None


def python_ast(text: str, filename: str = "<unknown>") -> ast.Module:
    """CPython's AST of the checked code.  Its warnings (an invalid escape sequence
    such as ``"\\d"`` is a SyntaxWarning since 3.12) are about the user's code, not
    about the run: they are silenced rather than printed on stderr."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


def parses(text: str) -> bool:
    import libcst

    try:
        python_ast(text)
        parse_module(text)
    except (SyntaxError, ValueError, RecursionError, libcst.ParserSyntaxError):
        return False
    return True
