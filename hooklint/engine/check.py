"""One file in, its result out: read and decode → prefilter → cache lookup → lint
(or the fix loop) → the result, a notebook's positions in its cells.  A bug met in
one file is that file's one-line error; writing a fixed file is
:mod:`hooklint.writer`'s job."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from hooklint.engine.fix import fix_text
from hooklint.engine.gc_pause import _collector_paused
from hooklint.engine.lint import lint_text
from hooklint.engine.nesting import TooDeeplyNested
from hooklint.engine.prefilter import (
    _noqa_candidate,
    is_candidate,
    may_concern_a_rule,
    prefilter_tokens,
    removes_handles,
)
from hooklint.engine.settings import FileResult, Settings
from hooklint.engine.syntax import syntax_check
from hooklint.files import SourceError, SourceFile, display_path, read_source
from hooklint.lexical import first_line
from hooklint.violation import Violation


def _rules_for(settings: Settings, path: str):
    if not settings.per_file_ignores:
        return _selected(settings.rule_codes, frozenset())
    ignored: set[str] = set()
    relative = None
    for pattern, codes in settings.per_file_ignores:
        if relative is None:  # per-file-ignores globs are relative to the config's directory
            relative = Path(os.path.relpath(os.path.abspath(path), settings.root)).as_posix()
        if (
            fnmatch.fnmatch(path, pattern)
            or fnmatch.fnmatch(relative, pattern)
            or fnmatch.fnmatch(os.path.basename(path), pattern)
        ):
            ignored.update(codes)
    return _selected(settings.rule_codes, frozenset(ignored))


@lru_cache(maxsize=256)
def _selected(codes: tuple[str, ...], ignored: frozenset) -> tuple:
    from hooklint.rules import rules_by_code

    table = rules_by_code()
    return tuple(table[c] for c in codes if not any(c.startswith(i) for i in ignored) or c == "HL000")


def forget_places() -> None:
    """:func:`hooklint.project.resolve.forget_places`, when cross-file resolution has
    run in this process (a run without a hook token never imports it, nor libcst)."""
    import sys

    resolve = sys.modules.get("hooklint.project.resolve")
    if resolve is not None:
        resolve.forget_places()


def check_source(source: SourceFile, shown: str, settings: Settings) -> FileResult:
    """One decoded file's result; a notebook's positions are given in its cells."""
    result = _check_source(source, shown, settings)
    return in_cells(source, result)


def check_text(text: str, path: str, settings: Settings, notebook=None) -> FileResult:
    """Check in-memory ``text`` as the file at ``path`` (an editor's buffer: the
    language server), as a file found in a directory is checked; ``notebook``: the
    :class:`hooklint.notebook.Notebook` whose joined cells ``text`` is."""
    forget_places()  # an editor's files come and go between two checks
    raw = text.encode("utf-8", "surrogatepass")
    return check_source(SourceFile(Path(path), raw, text, "utf-8", False, notebook=notebook), path, settings)


def in_cells(source: SourceFile, result: FileResult) -> FileResult:
    notebook = source.notebook
    if notebook is not None:
        result.violations = sorted(
            (notebook.map_violation(v) for v in result.violations), key=lambda v: v.sort_key
        )
    return result


def _check_source(source: SourceFile, shown: str, settings: Settings) -> FileResult:
    if not may_concern_a_rule(source.text, settings) and not _noqa_candidate(source.text, settings):
        return FileResult(shown)
    # Paused over the whole check, not only the lint: what the check holds until it
    # returns (the file's CPython AST in its project view, the fix loop's texts) is
    # freed by reference counting before the collector runs, instead of being
    # scanned by it.
    with _collector_paused():
        return _check_candidate(source, shown, settings)


def _check_candidate(source: SourceFile, shown: str, settings: Settings) -> FileResult:
    result = FileResult(shown)
    rules = _rules_for(settings, shown)
    tokens = prefilter_tokens(rules, settings.context.registration_wrappers)
    if (
        not is_candidate(source.text, tokens)
        and not _noqa_candidate(source.text, settings)
        and not removes_handles(source.text, settings, rules)
    ):
        return result
    stub = is_stub(source)
    context = settings.context
    if context.cross_file and not stub:
        from hooklint.project.resolve import FileView

        context = replace(
            context, project=FileView(str(source.path), source.text, settings.cache_dir, source.raw)
        )
    if (settings.fix or settings.diff) and not stub:
        notebook = source.notebook
        outcome = fix_text(source.text, shown, rules, context, settings.unsafe_fixes, notebook)
        result.violations = outcome.violations
        result.fixed = outcome.fixed
        result.fixed_codes = outcome.codes
        result.fix_failures = outcome.failures
        if outcome.text != source.text:
            if notebook is None:
                result.original, result.fixed_text = source.text, outcome.text
            else:  # the notebook's JSON, with the fixed cells written into it
                result.original, result.fixed_text = notebook.text, notebook.render(outcome.text)
        return result
    from hooklint import cache

    # the same bytes read as Python give another result
    kind = "\0stub" if stub else "" if source.notebook is None else "\0notebook"
    key = cache.key(source.raw, settings.fingerprint(rules) + kind) if settings.cache_dir else None
    cached = cache.load_with_dependencies(settings.cache_dir, key) if key else None
    if cached is not None:
        result.violations = [replace(v, path=shown) for v in cached[0]]
        result.dependencies = cached[1]
    else:
        result.violations = (
            syntax_check(source.text, shown, rules) if stub else lint_text(source.text, shown, rules, context)
        )
        if context.project is not None:
            result.dependencies = context.project.dependencies()
        if key:
            cache.store(settings.cache_dir, key, result.violations, result.dependencies)
    return result


def is_stub(source: SourceFile) -> bool:
    """A type stub (``.pyi``) declares; it never runs: no hook is registered, called
    or removed by one, so of the rules only HL000 applies (CPython compiles it)."""
    return source.notebook is None and source.path.suffix == ".pyi"


def check_path(path: str, settings: Settings, explicit: bool = False) -> FileResult:
    """One file's result.  A file named on the command line (``explicit``, as
    pre-commit names each staged file) without any hook token is still compiled by CPython (milliseconds,
    no libcst), and so is one whose lint found nothing (the lint may stop before any
    parse), so that a broken file never passes unseen."""
    shown = display_path(Path(path))
    try:
        source = read_source(Path(path), settings.max_file_size)
    except SourceError as exc:
        return FileResult(shown, error=str(exc))
    try:
        if explicit:
            compiled = compile_only(source.text, shown, settings)
            if compiled is not None:
                return in_cells(source, FileResult(shown, compiled))
        result = check_source(source, shown, settings)
        if explicit and not result.violations and result.error is None and "HL000" in settings.rule_codes:
            # The lint stops before any parse when no token names a call there (a
            # token inside a longer name): a named file is still compiled.
            broken = syntax_check(source.text, shown, ("HL000",))
            if broken:
                return in_cells(source, FileResult(shown, broken))
        return result
    except TooDeeplyNested as exc:
        return FileResult(shown, error=str(exc))
    except RecursionError:
        return FileResult(shown, error="too deeply nested to analyse")
    except Exception as exc:  # a bug in hooklint: this file's result is lost, not the run's
        return FileResult(shown, error=internal_error(exc))


def internal_error(exc: Exception) -> str:
    """The one line for a bug met while checking a file (``HOOKLINT_DEBUG=1``: the
    traceback too, on stderr)."""
    text = f"internal error: {type(exc).__name__}: {first_line(str(exc))}"
    if os.environ.get("HOOKLINT_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exc()
        return text
    return text + " (set HOOKLINT_DEBUG=1 for the traceback)"


def compile_only(text: str, shown: str, settings: Settings) -> list[Violation] | None:
    """For a file named on the command line: None when it holds a selected rule's token
    (the full check follows), else HL000 if CPython does not compile it."""
    if not may_concern_a_rule(text, settings) and not _noqa_candidate(text, settings):  # no rule is imported
        return syntax_check(text, shown, ("HL000",) if "HL000" in settings.rule_codes else ())
    rules = _rules_for(settings, shown)
    if (
        is_candidate(text, prefilter_tokens(rules, settings.context.registration_wrappers))
        or _noqa_candidate(text, settings)
        or removes_handles(text, settings, rules)
    ):
        return None
    return syntax_check(text, shown, rules)


def write_fixed(path: Path, result: FileResult) -> str | None:
    """Write a fixed file (see :mod:`hooklint.writer`: atomically, keeping encoding,
    BOM, newlines, owner and permissions; symlinks, hard links, read-only files and
    files changed since they were read).  Returns a one-line problem, or None."""
    from hooklint.writer import write_fixed_source

    return write_fixed_source(path, result.original, result.fixed_text)
