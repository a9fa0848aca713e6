"""Linting a text: the three parse paths.

A file is first screened on the definitions a token matched (:mod:`hooklint.screen`:
most files stop there); a finding something the screen dropped could clear sends it
to the text :mod:`hooklint.sparse` keeps; a rule that needs the whole module (or
``skip_irrelevant=False``) parses the whole file.  CPython parses first
(:mod:`hooklint.engine.parse`, :mod:`hooklint.engine.nesting`); a syntax error is
HL000 (:mod:`hooklint.engine.syntax`).  Positions are computed only for files that
have findings (:mod:`hooklint.engine.violations`); ``# noqa`` comes last.
"""

from __future__ import annotations

import ast

from hooklint.engine.findings import _findings
from hooklint.engine.gc_pause import _collector_paused
from hooklint.engine.nesting import check_nesting
from hooklint.engine.parse import _cpython_parse
from hooklint.engine.prefilter import (
    SEED_TOKENS,
    _prefilter_regex,
    needs_whole_module,
    prefilter_tokens,
    seed_regex,
)
from hooklint.engine.syntax import _cpython_syntax_error, _syntax_error, _syntax_violation
from hooklint.engine.violations import _report
from hooklint.lexical import lex, split_lines
from hooklint.rules.base import RuleContext
from hooklint.violation import Violation


def lint_text(
    text: str, path: str, rules, context: RuleContext, *, skip_irrelevant: bool = True
) -> list[Violation]:
    """Violations in ``text`` (``rules`` are rule classes), ``# noqa`` applied.

    The file is first screened on the definitions a token matched (most files stop
    there: :mod:`hooklint.screen`), then linted on the text :mod:`hooklint.sparse`
    keeps; ``skip_irrelevant=False`` parses the whole file instead (what
    ``benchmarks/sparse_parse.py`` compares with)."""
    from hooklint import noqa

    with _collector_paused():
        found = _lint_text(text, path, rules, context, skip_irrelevant)
    return noqa.apply(text, path, found, tuple(r.code for r in rules))


def _lint_text(text: str, path: str, rules, context: RuleContext, skip_irrelevant: bool) -> list[Violation]:
    whole = not skip_irrelevant or needs_whole_module(text, rules)
    screening = not whole and all(r.screenable for r in rules)
    wrappers = context.registration_wrappers
    cpython = lexed = None
    if screening and context.project is not None and _no_seed_without_a_parse(text, rules, context):
        return []  # as below, and the file is never parsed
    if context.project is not None:  # other files' wrappers and removal helpers are evidence too
        cpython = _cpython_parse(text)
        if isinstance(cpython, ast.Module):
            lexed = lex(text)
            context.project.use_tree(cpython, lexed.spans)  # its outline, without a second parse or scan
        wrappers += context.project.helper_names()
    prefilter = prefilter_tokens(rules, wrappers)
    # Every registration is evidence (a rule's own tokens may name only one of a pair).
    seeds = seed_regex(prefilter + SEED_TOKENS)
    if screening and seeds.names.search(text) is None:
        return []  # the prefilter's tokens were only parts of longer names
    if context.project is None:
        cpython = _cpython_parse(text)
    if isinstance(cpython, tuple):
        return [_syntax_violation(path, cpython[1], 1, "cannot parse: too deeply nested to analyse", "")]
    if isinstance(cpython, ast.Module):
        check_nesting(cpython, text)
    if isinstance(cpython, ast.Module) and not whole:
        if lexed is None:
            lexed = lex(text)  # where the strings and comments are, exactly
        if screening:
            from hooklint.screen import screening_source

            screen, line_numbers = screening_source(text, cpython, seeds, lexed)
            screened = _findings(screen, rules, context)
            if isinstance(screened, tuple) and not screened[1]:
                return []  # the common case: nothing here, at a fraction of the parse
            if isinstance(screened, tuple) and not any(rule.cleared_elsewhere for rule, _ in screened[1]):
                # Nothing the screen dropped could clear these: report them from it.
                return _report(screened, path, text, line_numbers)
        from hooklint.sparse import relevant_source

        parsed, line_numbers = _without_blank_lines(
            relevant_source(text, cpython, _prefilter_regex(prefilter)), lexed
        )
        outcome = _findings(parsed, rules, context)
        if isinstance(outcome, tuple):
            return _report(outcome, path, text, line_numbers)
    outcome = _findings(text, rules, context)
    if not isinstance(outcome, tuple):  # does not parse
        if isinstance(cpython, SyntaxError) and cpython.lineno:
            return [_cpython_syntax_error(cpython, path, text)]
        if isinstance(outcome, Exception) and hasattr(outcome, "raw_line"):
            return [_syntax_error(outcome, path, text)]
        return [_syntax_violation(path, 1, 1, f"cannot parse: {outcome}", "")]
    return _report(outcome, path, text)


def _no_seed_without_a_parse(text: str, rules, context: RuleContext) -> bool:
    """Whether the screen would find no seed in ``text`` (the early return below),
    decided before the file is parsed: no token of the rules or the configured
    wrappers names a call there, and the text alone shows that no name it calls
    reaches another file's helper (:meth:`FileView.reaches_no_helper`), whose names
    would be tokens too.  (On torch's sources 18 files stop here, 1.6 MB that
    cross-file analysis used to parse only to find nothing.)"""
    seeds = seed_regex(prefilter_tokens(rules, context.registration_wrappers) + SEED_TOKENS)
    return seeds.names.search(text) is None and context.project.reaches_no_helper()


def _without_blank_lines(code: str, lexed) -> tuple[str, list[int]]:
    """``code`` without its blank lines (libcst builds a node for each, and the sparse
    text is mostly blank lines), and each remaining line's number in ``code``.  A
    blank line inside a string literal is the string's (``lexed``: the original text,
    whose lines ``code`` keeps or empties) and stays."""
    lines = split_lines(code, keepends=True)
    in_string = lexed.in_string
    kept = [number for number, line in enumerate(lines, start=1) if line.strip() or in_string[number - 1]]
    return "".join(lines[n - 1] for n in kept), kept
