"""One file in, violations (and fixed source) out; the cache and the process pool around it.

The path of a file: read and decode → text prefilter (a file without any selected
rule's token is never parsed) → cache lookup → parse (a syntax error is an HL000
violation) → one facts pass → each rule's query → ``# noqa`` → violations.
Positions are computed only for files that have findings.

Fixing applies the chosen fixes' edits as text, re-parses, and re-lints, until no
fix is left (ruff's loop).  A round whose result does not parse is retried one fix
at a time; a fix that breaks the parse is dropped and reported, never written.
"""

from __future__ import annotations

import ast
import fnmatch
import gc
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from hooklint.files import DEFAULT_MAX_FILE_SIZE, SourceError, SourceFile, display_path, read_source
from hooklint.lexical import first_line, line_starts, newline_of, split_lines
from hooklint.rules.base import ANY_RULE_TOKENS, DYNAMIC_REGISTRATION_TOKEN, REGISTRATION_TOKEN, Finding, RuleContext
from hooklint.violation import SAFE, UNSAFE, Edit, Fix, Location, Violation

MAX_FIX_ROUNDS = 20
#: What makes a definition a seed of the screening parse, whatever rules are selected.
SEED_TOKENS = (REGISTRATION_TOKEN, DYNAMIC_REGISTRATION_TOKEN)


@dataclass(frozen=True)
class Settings:
    """Everything a worker process needs to check a file (picklable)."""

    rule_codes: tuple[str, ...]
    context: RuleContext = field(default_factory=RuleContext)
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "."
    cache_dir: str | None = None
    max_file_size: int | None = DEFAULT_MAX_FILE_SIZE

    def fingerprint(self, rules) -> str:
        """Everything besides a file's content that decides its result, for the
        content cache's key: hooklint's code, ``rules`` (those that apply to the
        file's path, after per-file-ignores: two files with the same content may get
        different results), the rule context and the fix options."""
        from hooklint.cache import code_fingerprint

        codes = tuple(rule.code for rule in rules)
        return repr((code_fingerprint(), codes, self.context, self.fix, self.unsafe_fixes, self.diff))


@dataclass
class FileResult:
    path: str
    violations: list[Violation] = field(default_factory=list)
    #: A one-line problem that kept the file from being checked (or written).
    error: str | None = None
    fixed: int = 0
    original: str | None = None
    fixed_text: str | None = None
    fix_failures: list[str] = field(default_factory=list)
    #: The code of each fix applied (``--show-fixes``).
    fixed_codes: list[str] = field(default_factory=list)
    #: Other files whose summaries the result rests on: path → content digest.
    dependencies: dict[str, str] = field(default_factory=dict)


# -- linting a text --------------------------------------------------------------------
def prefilter_tokens(rules, wrappers: tuple[str, ...] = ()) -> tuple[str, ...]:
    return _prefilter_tokens(tuple(rules), tuple(wrappers))


@lru_cache(maxsize=256)
def _prefilter_tokens(rules: tuple, wrappers: tuple[str, ...]) -> tuple[str, ...]:
    """The selected rules' prefilter tokens (or given tokens), plus configured registration wrappers."""
    tokens = {token for rule in rules for token in ((rule,) if isinstance(rule, str) else rule.prefilter)}
    tokens.update(w.rsplit(".", 1)[-1] for w in wrappers)
    return tuple(sorted(tokens))


@lru_cache(maxsize=64)
def _prefilter_regex(tokens: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(_token_regex(t) for t in tokens) or r"(?!)")


def _token_regex(token: str) -> str:
    return re.escape(token).replace(r"\*", r"\w*")


@lru_cache(maxsize=64)
def seed_regex(tokens: tuple[str, ...]):
    """Where the tokens occur in code *as what they name*: a call
    (``m.register_forward_hook(``, ``saved_tensors_hooks(``), a keyword
    (``always_call=``), an f-string name (``register_{``).  The prefilter may match
    ``register_hook`` in a dict key or ``saved_tensors_hooks`` inside a longer name; a
    seed may not.  A token ending in ``_`` is a prefix (``register_module_``); a
    leading ``_`` is allowed (``_register_state_dict_hook``).  ``.names`` matches the
    whole names anywhere (for imports)."""
    from hooklint.screen import NamePattern

    names, uses = [], []
    for token in tokens:
        part = _token_regex(token)
        if token.endswith("_"):
            part += r"\w*"
        if not part.endswith(r"\w*") and not token[-1:].isalnum():
            names.append(part)
            uses.append(part)  # ``register_{``, ``.forward(``: already a use
            continue
        part += r"(?![A-Za-z0-9_])"
        names.append(part)
        uses.append(part + (r"(?=\s*=)" if token == "always_call" else r"(?=\s*\()"))
    pattern = NamePattern("|".join(uses) or r"(?!)")
    pattern.names = NamePattern("|".join(names) or r"(?!)")
    return pattern


@lru_cache(maxsize=64)
def _prefilter_checks(tokens: tuple[str, ...]) -> tuple[tuple[str, re.Pattern], ...]:
    """The tokens grouped under *anchors*: literal text each token of the group
    contains (``register_`` for ``register_forward_hook``, ``register_*hook``...), with
    one regex for the group.  A file without an anchor skips its group; most files
    hold no anchor at all, and the rest need one regex search per anchor found."""
    prefixes = sorted({token.split("*", 1)[0] for token in tokens}, key=len)
    anchors: list[str] = []
    for prefix in prefixes:
        if not any(anchor in prefix for anchor in anchors):
            anchors.append(prefix)
    groups = []
    for anchor in anchors:
        members = sorted(t for t in tokens if anchor in t.split("*", 1)[0])
        if all(t.startswith(anchor) for t in members):  # one literal prefix: the fast search
            rest = "|".join(_token_regex(t[len(anchor) :]) for t in members)
            groups.append((anchor, re.compile(f"{re.escape(anchor)}(?:{rest})")))
        else:
            groups.append((anchor, re.compile("|".join(_token_regex(t) for t in members))))
    return tuple(groups)


def is_candidate(text: str, tokens: tuple[str, ...]) -> bool:
    """Whether a file may hold something a selected rule looks for (else it is not parsed)."""
    return any(anchor in text and group.search(text) is not None for anchor, group in _prefilter_checks(tokens))


def may_concern_a_rule(text: str, settings: "Settings") -> bool:
    """Whether ``text`` holds a token of any rule or configured wrapper: the check
    that runs first, before the rules (and libcst) are imported; a file that fails it
    is done (a named one is still compiled: :func:`compile_only`)."""
    return is_candidate(text, prefilter_tokens(ANY_RULE_TOKENS, settings.context.registration_wrappers))


class _Locator:
    """Positions of nodes, as 1-based lines and columns: computed for the nodes the
    findings name (:mod:`hooklint.positions`), and for the whole module should any
    other be asked for."""

    def __init__(self, module, text: str, nodes, line_numbers: list[int] | None = None) -> None:
        from hooklint.positions import positions_of

        self.module = module
        self.positions = positions_of(module, nodes)
        self.lines = split_lines(text)
        #: The file's line break: every line a fix writes ends with it.
        self.newline = newline_of(text)
        #: For a module parsed from some of ``text``'s lines: each parsed line's number in ``text``.
        self.line_numbers = line_numbers

    def _range(self, node):
        found = self.positions.get(node)
        if found is None:
            self.positions = self.every_position()
            found = self.positions[node]
        return found

    def every_position(self) -> dict:
        from libcst.metadata import MetadataWrapper, PositionProvider

        return dict(MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))

    def start(self, node) -> Location:
        return self._location(self._range(node).start)

    def end(self, node) -> Location:
        return self._location(self._range(node).end)

    def _location(self, position) -> Location:
        line = position.line
        if self.line_numbers is not None:
            # The end of the last line is the start of the (absent) next one.
            line = self.line_numbers[line - 1] if line <= len(self.line_numbers) else self.line_numbers[-1] + 1
        return Location(line, position.column + 1)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""


def _nodes_named(findings) -> set:
    """The nodes whose positions the findings and their fixes need: every node held
    by a finding's fix primitives (in fields, tuples of them, nested primitives)."""
    import dataclasses

    import libcst

    nodes = set()
    stack = []
    for _, finding in findings:
        nodes.add(finding.node)
        nodes.update(r for r in finding.related if not isinstance(r, Location))
        stack.extend(finding.fix_edits or ())
    while stack:
        value = stack.pop()
        if isinstance(value, libcst.CSTNode):
            nodes.add(value)
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            stack.extend(getattr(value, f.name) for f in dataclasses.fields(value))
    return nodes


def lint_text(text: str, path: str, rules, context: RuleContext, *, skip_irrelevant: bool = True) -> list[Violation]:
    """Violations in ``text`` (``rules`` are rule classes), ``# noqa`` applied.

    The file is first screened on the definitions a token matched (most files stop
    there: :mod:`hooklint.screen`), then linted on the text :mod:`hooklint.sparse`
    keeps; ``skip_irrelevant=False`` parses the whole file instead (what
    ``benchmarks/sparse_parse.py`` compares with)."""
    from hooklint import noqa

    with _collector_paused():
        found = _lint_text(text, path, rules, context, skip_irrelevant)
    return noqa.apply(text, path, found, tuple(r.code for r in rules))


@contextmanager
def _collector_paused():
    """Parsing builds hundreds of thousands of objects, and each few hundred would
    trigger a cyclic-garbage pass over all that survive (a fifth of the lint time).
    What a lint leaves in cycles is collected at the next pass after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _lint_text(text: str, path: str, rules, context: RuleContext, skip_irrelevant: bool) -> list[Violation]:
    whole = not skip_irrelevant or any(r.whole_module and is_candidate(text, r.prefilter) for r in rules)
    screening = not whole and all(r.screenable for r in rules)
    wrappers = context.registration_wrappers
    cpython = None
    if context.project is not None:  # other files' wrappers and removal helpers are evidence too
        cpython = _cpython_parse(text)
        if isinstance(cpython, ast.Module):
            context.project.use_tree(cpython)  # its outline, without a second parse
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
        from hooklint.lexical import lex

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

        parsed, line_numbers = _without_blank_lines(relevant_source(text, cpython, _prefilter_regex(prefilter)), lexed)
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


def _without_blank_lines(code: str, lexed) -> tuple[str, list[int]]:
    """``code`` without its blank lines (libcst builds a node for each, and the sparse
    text is mostly blank lines), and each remaining line's number in ``code``.  A
    blank line inside a string literal is the string's (``lexed``: the original text,
    whose lines ``code`` keeps or empties) and stays."""
    lines = split_lines(code, keepends=True)
    in_string = lexed.in_string
    kept = [number for number, line in enumerate(lines, start=1) if line.strip() or in_string[number - 1]]
    return "".join(lines[n - 1] for n in kept), kept


def _report(outcome, path: str, text: str, line_numbers: list[int] | None = None) -> list[Violation]:
    """Findings as violations, with positions in ``text`` (the parsed code kept the
    columns of every line it kept; ``line_numbers`` maps its lines to ``text``'s when
    it dropped some); :func:`lint_text` applies ``# noqa``."""
    module, findings = outcome
    if not findings:
        return []
    locator = _Locator(module, text, _nodes_named(findings), line_numbers)
    violations = []
    for rule, finding in findings:
        try:
            violations.append(_violation(rule, finding, path, locator))
        except KeyError:  # it points into another module (a hook body imported from it): that file's finding
            continue
    return sorted(set(violations), key=lambda v: v.sort_key)


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


#: The deepest expression libcst is given.  Its native parser recurses once per level
#: and overflows the C stack (a segfault, not an exception) near 7,000 levels on an
#: 8 MB stack; the analysis in Python gives up near 500 anyway.
MAX_NESTING = 1000


class TooDeeplyNested(RecursionError):
    """Code nested deeper than :data:`MAX_NESTING` as libcst counts (one message)."""

    def __init__(self, line: int) -> None:
        super().__init__(f"too deeply nested for the analyzer (over {MAX_NESTING} levels, line {line}); not analysed")
        self.line = line


def check_nesting(tree: ast.Module, text: str) -> None:
    """Raise :class:`TooDeeplyNested` when an expression in ``tree`` is nested deeper
    than libcst can parse.  CPython's own guards do not see every case: ``ast``
    flattens ``a and b and c`` into one node where libcst nests a node per operator.

    Each level takes at least one character of source, so only expressions spanning
    half of :data:`MAX_NESTING` characters or more (a margin for columns counted in
    UTF-8 bytes) are walked: none in most files."""
    least = MAX_NESTING // 2
    if len(text) < least:
        return
    starts = line_starts(text)

    def span(node) -> int:
        first = node.decorator_list[0] if getattr(node, "decorator_list", None) else node  # ``lineno`` is the ``def``'s
        return starts[node.end_lineno - 1] - starts[first.lineno - 1] + node.end_col_offset - first.col_offset + 1

    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
    stack: list = list(tree.body)
    while stack:
        node = stack.pop()
        if span(node) < least:
            continue  # most statements
        if not hasattr(node, "body"):  # a simple statement
            if _depth(node) > MAX_NESTING:
                raise TooDeeplyNested(node.lineno)
            continue
        for name in node._fields:  # a block: its header's expressions, its statements
            value = getattr(node, name, None)
            for child in value if isinstance(value, list) else (value,):
                if isinstance(child, blocks):
                    stack.append(child)
                elif type(child) is ast.arguments:
                    if any(span(d) >= least and _depth(d) > MAX_NESTING for d in (*child.defaults, *child.kw_defaults) if d is not None):
                        raise TooDeeplyNested(node.lineno)
                elif isinstance(child, ast.AST) and (not hasattr(child, "end_lineno") or span(child) >= least) and _depth(child) > MAX_NESTING:
                    raise TooDeeplyNested(getattr(child, "lineno", node.lineno))


def _depth(root: ast.AST) -> int:
    """How deep libcst will nest ``root``: a node per level, and ``a and b and c``
    (one ``ast.BoolOp``) as a chain of ``len(values) - 1`` operations."""
    deepest = 0
    stack = [(root, 1)]
    node_type = ast.AST
    while stack:
        node, depth = stack.pop()
        if type(node) is ast.BoolOp:
            depth += len(node.values) - 1
        if depth > deepest:
            deepest = depth
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend((child, depth + 1) for child in value if isinstance(child, node_type))
            elif isinstance(value, node_type):
                stack.append((value, depth + 1))
    return deepest


def _findings(code: str, rules, context: RuleContext):
    """``(module, [(rule, finding), ...])`` for code that libcst parses; else libcst's
    ParserSyntaxError, or a short reason."""
    import libcst

    from hooklint.analysis.collector import collect

    try:
        module = parse_module(code)
    except libcst.ParserSyntaxError as exc:
        return exc
    except (RecursionError, ValueError) as exc:  # deeply nested or unparseable input
        return type(exc).__name__
    facts = collect(module, context.registration_wrappers, context.project)
    findings = []
    for rule in rules:
        if rule.code == "HL000":
            continue
        for finding in rule().check(facts, context):
            findings.append((rule, finding))
    return module, findings


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


def _violation(rule, finding: Finding, path: str, locator: _Locator) -> Violation:
    fix = None
    if finding.fix_edits and finding.fix_withheld is None:
        from hooklint.fixes.edits import resolve_edits

        try:
            edits = tuple(sorted(set(resolve_edits(finding.fix_edits, locator)), key=lambda e: (e.start, e.end)))
        except KeyError:  # an edit of another module's code (cross-file evidence) is never offered
            edits = None
        fix = None if edits is None else Fix(finding.fix_message, UNSAFE if finding.unsafe_fix or rule.fix_applicability == UNSAFE else SAFE, edits)
    message = " ".join(finding.message.split())  # one line: names copied from source may hold line breaks
    if finding.fix_withheld:
        message += f" (fix withheld: {finding.fix_withheld})"
    start = locator.start(finding.node)
    return Violation(
        code=rule.code,
        name=rule.name,
        message=message,
        path=path,
        start=start,
        end=locator.end(finding.node),
        fix=fix,
        fix_withheld=finding.fix_withheld,
        source_line=locator.line(start.line),
        related=tuple(node if isinstance(node, Location) else locator.start(node) for node in finding.related),
    )


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


# -- fixing a text -----------------------------------------------------------------------
def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits (positions refer to ``text``)."""
    starts = line_starts(text)

    def offset(location: Location) -> int:
        if location.line > len(starts):
            return len(text)
        return min(starts[location.line - 1] + location.column - 1, len(text))

    for edit in sorted(set(edits), key=lambda e: (e.start, e.end), reverse=True):
        text = text[: offset(edit.start)] + edit.content + text[offset(edit.end) :]
    return text


def _overlaps(a: Fix, b: Fix) -> bool:
    return any(x.start <= y.end and y.start <= x.end for x in a.edits for y in b.edits)


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


@dataclass
class FixOutcome:
    text: str
    fixed: int
    failures: list[str]
    violations: list[Violation]
    #: The code of each fix applied (``--show-fixes``).
    codes: list[str] = field(default_factory=list)


def fix_text(text: str, path: str, rules, context: RuleContext, unsafe: bool, notebook=None) -> FixOutcome:
    """Apply fixes until none is left; never return code that does not parse (nor,
    for a ``notebook``'s joined cells, code moved across cells: :mod:`hooklint.notebook`)."""
    def keeps(candidate: str) -> bool:
        return parses(candidate) and (notebook is None or notebook.keeps_cells(candidate))

    fixed = 0
    codes: list[str] = []
    failures: list[str] = []
    broken: set[tuple[str, Location]] = set()
    violations = lint_text(text, path, rules, context)
    for _ in range(MAX_FIX_ROUNDS):
        fixable = [v for v in violations if v.is_fixable(unsafe) and (v.code, v.start) not in broken]
        if not fixable:
            break
        chosen: list[Violation] = []
        for violation in fixable:
            if not any(_overlaps(violation.fix, other.fix) for other in chosen):
                chosen.append(violation)
        candidate = apply_edits(text, [e for v in chosen for e in v.fix.edits])
        if not keeps(candidate):
            first = chosen[0]
            chosen = [first]
            candidate = apply_edits(text, first.fix.edits)
            if not keeps(candidate):
                broken.add((first.code, first.start))
                where = f"{first.start.line}:{first.start.column}" if notebook is None else notebook.where(first.start)
                why = "it would leave code that does not parse" if notebook is None or not parses(candidate) else "it would move code across notebook cells"
                failures.append(f"{path}:{where}: {first.code} fix rolled back: {why}")
                continue
        text = candidate
        fixed += len(chosen)
        codes.extend(v.code for v in chosen)
        violations = lint_text(text, path, rules, context)
    return FixOutcome(text, fixed, failures, violations, codes)


# -- one file ------------------------------------------------------------------------------
def _rules_for(settings: Settings, path: str):
    if not settings.per_file_ignores:
        return _selected(settings.rule_codes, frozenset())
    ignored: set[str] = set()
    relative = None
    for pattern, codes in settings.per_file_ignores:
        if relative is None:  # per-file-ignores globs are relative to the config's directory
            relative = Path(os.path.relpath(os.path.abspath(path), settings.root)).as_posix()
        if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
            ignored.update(codes)
    return _selected(settings.rule_codes, frozenset(ignored))


@lru_cache(maxsize=256)
def _selected(codes: tuple[str, ...], ignored: frozenset) -> tuple:
    from hooklint.rules import rules_by_code

    table = rules_by_code()
    return tuple(table[c] for c in codes if not any(c.startswith(i) for i in ignored) or c == "HL000")


def _noqa_candidate(text: str, settings: Settings) -> bool:
    """Whether HL100 (unused-noqa) is selected and ``text`` has a ``# noqa: HL...`` (no
    rule is loaded for this: a file without hook tokens stays cheap)."""
    if "noqa" not in text:
        return False
    from hooklint import noqa

    return noqa.mentions_hooklint_code(text) and noqa.UNUSED_NOQA in settings.rule_codes


def check_source(source: SourceFile, shown: str, settings: Settings) -> FileResult:
    """One decoded file's result; a notebook's positions are given in its cells."""
    result = _check_source(source, shown, settings)
    return in_cells(source, result)


def check_text(text: str, path: str, settings: Settings, notebook=None) -> FileResult:
    """Check in-memory ``text`` as the file at ``path`` (an editor's buffer: the
    language server), as a file found in a directory is checked; ``notebook``: the
    :class:`hooklint.notebook.Notebook` whose joined cells ``text`` is."""
    raw = text.encode("utf-8", "surrogatepass")
    return check_source(SourceFile(Path(path), raw, text, "utf-8", False, notebook=notebook), path, settings)


def in_cells(source: SourceFile, result: FileResult) -> FileResult:
    notebook = source.notebook
    if notebook is not None:
        result.violations = sorted((notebook.map_violation(v) for v in result.violations), key=lambda v: v.sort_key)
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
    if not is_candidate(source.text, tokens) and not _noqa_candidate(source.text, settings):
        return result
    context = settings.context
    if context.cross_file:
        from hooklint.project.resolve import FileView

        context = replace(context, project=FileView(str(source.path), source.text, settings.cache_dir))
    if settings.fix or settings.diff:
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

    kind = "" if source.notebook is None else "\0notebook"  # the same bytes read as Python give another result
    key = cache.key(source.raw, settings.fingerprint(rules) + kind) if settings.cache_dir else None
    cached = cache.load_with_dependencies(settings.cache_dir, key) if key else None
    if cached is not None:
        result.violations = [replace(v, path=shown) for v in cached[0]]
        result.dependencies = cached[1]
    else:
        result.violations = lint_text(source.text, shown, rules, context)
        if context.project is not None:
            result.dependencies = context.project.dependencies()
        if key:
            cache.store(settings.cache_dir, key, result.violations, result.dependencies)
    return result


def check_path(path: str, settings: Settings, explicit: bool = False) -> FileResult:
    """One file's result.  A file named on the command line (``explicit``, as
    pre-commit names each staged file) without any hook token is still compiled by CPython (milliseconds,
    no libcst), so that a broken file never passes unseen."""
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
        return check_source(source, shown, settings)
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
    if is_candidate(text, prefilter_tokens(rules, settings.context.registration_wrappers)) or _noqa_candidate(text, settings):
        return None
    return syntax_check(text, shown, rules)


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


def write_fixed(path: Path, result: FileResult) -> str | None:
    """Write a fixed file (see :mod:`hooklint.writer`: atomically, keeping encoding,
    BOM, newlines, owner and permissions; symlinks, hard links, read-only files and
    files changed since they were read).  Returns a one-line problem, or None."""
    from hooklint.writer import write_fixed_source

    return write_fixed_source(path, result.original, result.fixed_text)


# -- many files ---------------------------------------------------------------------------
#: Below this many candidate files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 8


def worker_count(jobs: int, files: int) -> int:
    """``--jobs``, capped at the number of files and of CPUs."""
    return max(1, min(jobs, files, os.cpu_count() or 1))


def check_paths(paths: Sequence[Path], settings: Settings, jobs: int, explicit: Sequence[bool] | None = None) -> list[FileResult]:
    """Check files, in worker processes when there are enough of them.

    Workers get the paths in small chunks and read, prefilter and lint them
    themselves: reading and prefiltering thousands of files costs as much as linting
    the few that pass, so it is shared out too.  A worker that dies (a crash in the
    native parser, the kernel's OOM killer) costs one file: that file gets a one-line
    error, the rest of its chunk goes to a new worker, and every other result stands.
    ``explicit[i]``: whether ``paths[i]`` was named on the command line."""
    flags = list(explicit) if explicit is not None else [False] * len(paths)
    jobs = worker_count(jobs, len(paths))
    if jobs <= 1 or len(paths) < PARALLEL_THRESHOLD or _few_concern_a_rule(paths, settings):
        return [check_path(str(p), settings, flag) for p, flag in zip(paths, flags)]
    _prepare_worker()  # once, here: the workers share what the parent imported
    tasks = [(i, str(p), flag) for i, (p, flag) in enumerate(zip(paths, flags))]
    size = max(1, len(tasks) // (jobs * 32))
    chunks = [tasks[i : i + size] for i in range(0, len(tasks), size)]
    # Workers fork from here: frozen objects are never scanned by their collector, so
    # their pages stay shared instead of being copied on first touch.
    gc.freeze()
    try:
        return _Pool(jobs, settings).run(chunks, len(tasks))
    finally:
        gc.unfreeze()


#: Up to this many files (a pre-commit batch), the parent reads them first to see
#: whether enough of them hold a rule's token to be worth starting workers.
PARENT_SCREEN_LIMIT = 256


def _few_concern_a_rule(paths: Sequence[Path], settings: Settings) -> bool:
    """For a short list of files: fewer than :data:`PARALLEL_THRESHOLD` of them hold any
    rule's token (the rest cost a read and a regex search each: no worker, no libcst)."""
    if len(paths) > PARENT_SCREEN_LIMIT:
        return False
    concerned = 0
    for path in paths:
        try:
            text = read_source(Path(path), settings.max_file_size).text
        except (SourceError, OSError, ValueError):
            continue  # its own check reports it
        if may_concern_a_rule(text, settings):
            concerned += 1
            if concerned >= PARALLEL_THRESHOLD:
                return False
    return True


class _Pool:
    """Worker processes, each fed chunks through its own pipe and answering one
    message per file, so that the parent always knows which file a dead worker was on."""

    def __init__(self, size: int, settings: Settings) -> None:
        self.size = size
        self.settings = settings
        self.context = _fork_context()
        self.workers: dict = {}  # connection -> [process, the unanswered part of its chunk]

    def run(self, chunks: list, count: int) -> list[FileResult]:
        from collections import deque
        from multiprocessing.connection import wait

        pending = deque(chunks)
        results: list[FileResult | None] = [None] * count
        try:
            for _ in range(min(self.size, len(pending))):
                self._start(pending.popleft())
            while self.workers:
                ready = set(wait(list(self.workers) + [w[0].sentinel for w in self.workers.values()]))
                for connection in list(self.workers):
                    process, chunk = self.workers[connection]
                    if connection not in ready and process.sentinel not in ready:
                        continue
                    dead = process.sentinel in ready
                    try:
                        while connection.poll():
                            position, result = connection.recv()
                            results[position] = result
                            chunk.popleft()
                    except (EOFError, OSError):
                        dead = True
                    if dead:
                        self._forget(connection)
                        if chunk:  # it died on chunk[0]: mark that file, re-run the rest
                            position, name, _ = chunk.popleft()
                            results[position] = FileResult(display_path(Path(name)), error=_death(process.exitcode))
                            if chunk:
                                pending.appendleft(list(chunk))
                        if pending:
                            self._start(pending.popleft())
                    elif not chunk:  # its chunk is done: the next one, or stop
                        if pending:
                            chunk.extend(pending.popleft())
                            self._send(connection, list(chunk))
                        else:
                            self._send(connection, None)
                            self._forget(connection)
        finally:
            self.close()
        return results  # type: ignore[return-value]

    def _start(self, chunk) -> None:
        from collections import deque

        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker_main, args=(child, self.settings), daemon=True)
        process.start()
        child.close()
        self.workers[parent] = [process, deque(chunk)]
        self._send(parent, list(chunk))

    def _forget(self, connection) -> None:
        process, _ = self.workers.pop(connection)
        process.join()
        connection.close()

    @staticmethod
    def _send(connection, message) -> None:
        try:
            connection.send(message)
        except OSError:
            pass  # a dead worker: its sentinel says so

    def close(self) -> None:
        """Stop every worker (on an interrupt, or an error in the parent)."""
        for connection, (process, _) in list(self.workers.items()):
            if process.is_alive():
                process.kill()
            process.join()
            connection.close()
        self.workers.clear()


def _death(exitcode: int | None) -> str:
    import signal

    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exited with status {exitcode}"
    return f"the analyzer crashed on this file (worker process {how}); not checked"


def _worker_main(connection, settings: Settings) -> None:
    """A worker: chunks of ``(position, path, explicit)`` in, one ``(position,
    FileResult)`` per file out, until it is sent None."""
    _die_with_parent()
    _prepare_worker()
    try:
        while True:
            chunk = connection.recv()
            if chunk is None:
                return
            for position, path, explicit in chunk:
                connection.send((position, check_path(path, settings, explicit)))
    except (EOFError, OSError, KeyboardInterrupt):
        return  # the parent is gone or stopping


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when its parent dies (however it dies), so that
    no worker outlives an interrupted or killed run; elsewhere a no-op (workers are
    daemons: a parent that exits normally stops them)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles ^C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


def _prepare_worker() -> None:
    """Import the parser, the analysis and the rules: in the parent before it forks
    the workers (so they share them), and in a worker (a no-op after a fork)."""
    import libcst  # noqa: F401

    import hooklint.analysis.collector  # noqa: F401
    import hooklint.rules

    hooklint.rules.all_rules()


def _fork_context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")
