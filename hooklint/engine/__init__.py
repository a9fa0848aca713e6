"""One file in, violations (and fixed source) out; the cache and the process pool around it.

The engine's modules, in the order a file goes through them::

    parallel      many files: the process pool (``--jobs``), or one by one
    check         one file: read and decode, the cache, lint or fix, a notebook's cells
    prefilter     a file without any selected rule's token is never parsed
    lint          the three parse paths: the screen, the sparse text, the whole file
    parse         CPython's parse first, then libcst's (without per-node validation)
    construction  libcst's nodes built through their slots while a lint's parse runs
    nesting       code nested deeper than libcst's parser can take is refused
    syntax        a file that does not parse: HL000
    findings      parse → one facts pass → each rule's query
    violations    findings → violations, with their fixes
    locator       where findings are: lines and columns of the nodes they name
    fix           the fix loop: apply, re-parse, re-lint until no fix is left
    gc_pause      the cyclic garbage collector paused over a check
    settings      what a check is given (Settings) and gives back (FileResult)

Writing a fixed file is :mod:`hooklint.writer`'s job (:func:`write_fixed`).  This
module only re-exports the names the rest of hooklint, the tests and the benchmarks
use; a test that replaces a function replaces it in the module that calls it.
"""

from __future__ import annotations

from hooklint.engine.check import (
    check_path,
    check_source,
    check_text,
    compile_only,
    in_cells,
    internal_error,
    write_fixed,
)
from hooklint.engine.findings import _findings
from hooklint.engine.fix import MAX_FIX_ROUNDS, FixOutcome, apply_edits, fix_text
from hooklint.engine.lint import _without_blank_lines, lint_text
from hooklint.engine.nesting import MAX_NESTING, TooDeeplyNested, check_nesting
from hooklint.engine.parallel import PARALLEL_THRESHOLD, PARENT_SCREEN_LIMIT, check_paths, worker_count
from hooklint.engine.parse import parse_module, parses, python_ast
from hooklint.engine.prefilter import (
    SEED_TOKENS,
    _prefilter_regex,
    is_candidate,
    may_concern_a_rule,
    prefilter_tokens,
    seed_regex,
)
from hooklint.engine.settings import FileResult, Settings
from hooklint.engine.syntax import syntax_check

__all__ = [
    "MAX_FIX_ROUNDS",
    "MAX_NESTING",
    "PARALLEL_THRESHOLD",
    "PARENT_SCREEN_LIMIT",
    "SEED_TOKENS",
    "FileResult",
    "FixOutcome",
    "Settings",
    "TooDeeplyNested",
    "apply_edits",
    "check_nesting",
    "check_path",
    "check_paths",
    "check_source",
    "check_text",
    "compile_only",
    "fix_text",
    "in_cells",
    "internal_error",
    "is_candidate",
    "lint_text",
    "may_concern_a_rule",
    "parse_module",
    "parses",
    "prefilter_tokens",
    "python_ast",
    "seed_regex",
    "syntax_check",
    "worker_count",
    "write_fixed",
    # Private, but imported from here by hooklint.project.summary and the tests.
    "_findings",
    "_prefilter_regex",
    "_without_blank_lines",
]
