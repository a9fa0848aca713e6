"""Whether CPython's parser accepts a text, asked the cheapest way: its symbol table
builds (the parse, and no AST objects or code generation: a third cheaper than
compiling, a quarter of building the AST).  The pre-commit fast path
(:mod:`hooklint.entry`) and HL000's check of files that are only compiled
(:func:`hooklint.engine.syntax.syntax_check`) ask it first; only a file it refuses
is parsed again for the verdict, its message and its position."""

from __future__ import annotations


def parses(text: str, filename: str) -> bool:
    """Whether CPython's parser accepts ``text``: its symbol table builds (which needs
    the parse, and no code generation).  False for any error, also one that only the
    symbol table raises (``nonlocal`` at module level) or a recursion limit: the caller
    asks the full check then, whose verdict stands."""
    import _symtable
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are about the user's code
            _symtable.symtable(text, filename, "exec")
    except Exception:  # SyntaxError, RecursionError, MemoryError, ValueError...
        return False
    return True
