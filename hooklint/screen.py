"""Screen a file on a small part of it before linting it in full.

Most candidate files have no finding, and the evidence for one sits where a token
matched in code: the registration, the function around it, the hook it names.
:func:`screening_source` keeps only those lines (whole lines, so columns stay put,
with each kept line's number in the file) and the engine lints them.  A file that
shows no finding there is done; a finding of a rule that nothing dropped can clear
(``Rule.cleared_elsewhere``) is reported from there; any other sends the file to a
second lint, on :func:`hooklint.sparse.relevant_source`'s text.

What is kept:

* *seeds*: functions (top-level, or methods of classes at any depth) whose code —
  strings and comments left out — *uses* a token (a call ``m.register_forward_hook(``,
  a keyword ``always_call=``, an f-string name ``register_{``; a dict keyed by
  ``Tensor.register_hook`` only mentions it) or calls a setup method
  (``self.register_hooks(``), whole; module-level statements that use one;
* the definitions a seed uses as a value, calls inside a registration's arguments, or
  uses to build a name passed there (hook functions, hook methods, factories; a
  class keeps its own statements, ``__init__`` and ``__call__``, not all its methods);
* callers of a seed that passes one of its parameters to a registration (an in-file
  registration wrapper), and what those callers name; the methods that call a
  registering method of their class (``self._install(``), and their callers, a few
  levels up (a caller of a setup method acquires what the class removes elsewhere);
* the functions and methods kept code calls by name, a few calls deep (a removal
  helper decides whether a handle is removed outside ``finally`` or escapes);
* module-level compound statements, and the imports and assignments that bind a
  name the kept code mentions; all module-level code when a module-level statement is a seed
  (module-level code is one scope: what runs between a registration and a removal
  there matters).

What is dropped is meant only to *clear* a finding (a removal in code that nothing
kept calls, a ``with`` in another method), so that a file with a finding shows one here too; ``benchmarks/sparse_parse.py``
checks that on real code (torch and seven hook-heavy projects: the same findings as
whole files).  A finding that something dropped could clear is confirmed on the
fuller text, so nothing dropped can add a false one.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

from hooklint.analysis import vocabulary
from hooklint.analysis.vocabulary import REMOVE_METHOD, SETUP_WORDS
from hooklint.guarded_regex import (
    NO_NAME_OR_DOT,
    CalledNames,
    Guarded,
    after_no_self_or_cls,
    names_alternation,
    not_after_word,
)
from hooklint.lexical import Lexed, closing_bracket, lex, word_before
from hooklint.sparse import (
    APPLIED,
    BOUND_METHOD,
    DELEGATING,
    WORD,
    acquiring_calls,
    base_words,
    last_name,
    owner_calls,
    parameters,
)
from hooklint.tokens import REGISTRATION_NAMES

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: The vocabulary's lifecycle partners of a name, asked once per name (every method of
#: every candidate file is asked about).
lifecycle_partners = lru_cache(maxsize=4096)(vocabulary.lifecycle_partners)
lifecycle_teardowns = lru_cache(maxsize=4096)(vocabulary.lifecycle_teardowns)
_CALLABLE_OBJECT = frozenset({"__call__", "__init__"})
#: A name not followed by a call's parenthesis: used as a value.
_REFERENCE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()")
#: A name called as a function or a method of ``self``/``cls``: ``helper(``, ``self._enter(``.
_BARE_CALLED = CalledNames(NO_NAME_OR_DOT)
_SELF_CALLED = Guarded(r"(?:self|cls)\.([A-Za-z_][A-Za-z0-9_]*)\s*\(", not_after_word)
#: A method of a base called through ``super()``: ``super().__init__(``.
_SUPER_CALLED = Guarded(r"super\(\s*\)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(", not_after_word)
#: A method called on another object: ``tap.detach_all(``, ``self.taps[k].attach(``.
_OTHER_CALLED = Guarded(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(", after_no_self_or_cls)
#: A call of a method whose name says it installs hooks (``self.register_hooks(model)``):
#: the handle model acquires, there, what the class removes elsewhere.
_SETUP_CALL = r"\b(?:self|cls)\.\w*(?:" + "|".join(re.escape(w) for w in SETUP_WORDS) + r")\w*(?=\s*\()"
_SETUP_CALL_AT = re.compile(_SETUP_CALL)
#: The function ``Module.apply`` is handed, by name (``model.apply(partial(fn, ...))``).
_APPLIED_NAME = re.compile(APPLIED + r"([A-Za-z_][A-Za-z0-9_]*)\s*[,)]")
#: ``X.apply(obj.`` (then a method's name): ``Module.apply`` handed a method of another
#: object than ``self``/``cls``.
_APPLIED_OTHER = r"\.\s*apply\s*\(\s*(?!(?:self|cls)\s*\.)[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*\s*\.\s*"
#: ``name = value`` on one line (not ``==``).
_ASSIGNMENT = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=(?!=)([^\r\n]*)", re.MULTILINE)
#: Module-level statements dropped unless they bind a name the kept code mentions
#: (a star import is always kept: it may bind any name).
_DROPPABLE = (
    ast.Expr,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Assert,
    ast.Delete,
    ast.Import,
    ast.ImportFrom,
)


#: Registration APIs whose name has no leading underscore: one written after an
#: underscore is another method (``self._register_hook(``).
_EXACT_NAMES = frozenset(n for n in REGISTRATION_NAMES if not n.startswith("_"))


class NamePattern:
    """A regex whose matches must start a name, after its leading underscores if any:
    ``saved_tensors_hooks`` in ``x.saved_tensors_hooks(`` or ``_saved_tensors_hooks``,
    not in ``inline_saved_tensors_hooks`` (another function's name); a registration
    API's name, exactly (:data:`_EXACT_NAMES`).

    A leading look-behind in the regex itself would do the same, but it stops the
    regex engine from skipping ahead to the characters a match can start with, which
    makes a search of a large file twenty times slower."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.regex = re.compile(pattern)
        self._names: NamePattern | None = None

    @property
    def names(self) -> NamePattern:
        """The same names wherever they occur, not only where used (itself unless set;
        not stored as an attribute referring to itself, a cycle only the garbage
        collector frees)."""
        return self if self._names is None else self._names

    @names.setter
    def names(self, value: NamePattern) -> None:
        self._names = None if value is self else value

    def finditer(self, text: str):
        for match in self.regex.finditer(text):
            start = match.start()
            if start and text[start - 1] == "_" and match.group() in _EXACT_NAMES:
                continue  # a registration API's name is exact: ``self._register_hook(`` is another
            if start == 0 or not text[start].isalnum():
                yield match
                continue
            before = start - 1
            while before >= 0 and text[before] == "_":  # a name's leading underscores
                before -= 1
            if before < 0 or not (text[before].isalnum() or text[before] == "_"):
                yield match

    def search(self, text: str):
        return next(self.finditer(text), None)


@dataclass(eq=False)
class _Unit:
    """A function outside any function (top-level or a method), or a class holding some."""

    node: ast.AST
    name: str
    first: int  # 1-based, decorators included
    last: int
    indent: str
    members: list[_Unit] = field(default_factory=list)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, ast.ClassDef)

    def walk(self):
        yield self
        for member in self.members:
            yield from member.walk()

    def own_lines(self) -> range | list[int]:
        """Its line numbers, a class's without its members'."""
        if not self.members:
            return range(self.first, self.last + 1)
        inside = {n for m in self.members for n in range(m.first, m.last + 1)}
        return [n for n in range(self.first, self.last + 1) if n not in inside]


class _Lines:
    """The file's lines, which of them are kept, and the text that replaces a line."""

    def __init__(self, lexed: Lexed) -> None:
        self.lexed = lexed
        self.text = lexed.lines
        #: The whole file, strings and comments blanked (f-strings kept).
        self.code_text = lexed.code_text
        self.kept = bytearray(b"\x01") * len(self.text)
        self.replaced: dict[int, str] = {}
        self.offsets = lexed.offsets[:-1]

    def number_at(self, offset: int) -> int:
        return bisect.bisect_right(self.offsets, offset)

    def join(self, numbers) -> str:
        return "".join(self.text[n - 1] for n in numbers)

    def code(self, numbers) -> str:
        """Lines ``numbers``, strings and comments blanked."""
        return self.lexed.code(numbers)

    def drop(self, first: int, last: int) -> None:
        self.kept[first - 1 : last] = bytes(last - first + 1)

    def result(self) -> tuple[str, list[int]]:
        numbers = [
            n
            for n, (line, kept) in enumerate(zip(self.text, self.kept), start=1)
            if kept and not self.lexed.droppable(n - 1)  # comments cost a parse and hold no evidence
        ]
        return "".join(self.replaced.get(n, self.text[n - 1]) for n in numbers), numbers


def screening_source(
    text: str, tree: ast.Module, tokens: NamePattern, lexed: Lexed | None = None
) -> tuple[str, list[int]]:
    """What of ``text`` can hold the evidence for a finding: the code, without blank
    lines, and the number in ``text`` of each of its lines (columns are unchanged).
    ``lexed`` is :func:`hooklint.lexical.lex` of ``text`` (computed when not given)."""
    lines = _Lines(lexed if lexed is not None else lex(text))
    tokens = _with_aliases(tree, tokens)
    given = tokens
    setup_calls = NamePattern(tokens.pattern + "|" + _SETUP_CALL)
    setup_calls.names = tokens.names
    tokens = setup_calls
    top = list(_units(tree.body, lines.text))
    units = [u for t in top for u in t.walk()]
    module_level = [s for s in tree.body if not isinstance(s, (*_FUNCTIONS, ast.ClassDef))]

    matched = _matched_lines(lines, given)
    seeds, seed_codes = [], []
    for unit in _innermost(units, matched):
        code = lines.code(unit.own_lines())
        if tokens.search(code):
            seeds.append(unit)
            seed_codes.append(code)
    module_seeds = []
    for statement in module_level:
        last = statement.end_lineno or statement.lineno
        if any(statement.lineno <= n <= last for n in matched):
            code = lines.code(range(statement.lineno, last + 1))
            if tokens.search(code):
                module_seeds.append(code)
    # A class that extends a token's class (``class Offload(saved_tensors_hooks):``)
    # hands its own ``__enter__``/``__exit__`` on to it: they are seeds.
    extending = [u for u in units if u.is_class and any(given.names.search(w) for w in base_words(u.node))]
    for unit in extending:
        for member in unit.members:
            if member.name in DELEGATING and member not in seeds:
                seeds.append(member)
                seed_codes.append(lines.code(member.own_lines()))
    if not seeds and not module_seeds:
        return "", []  # the tokens matched only in strings and comments
    _add_other_object_callers(units, seeds, seed_codes, module_level, module_seeds, lines)

    words: set[str] = set()  # every name a seed mentions
    for unit in extending:  # and the base a delegating class names (its import stays)
        words.update(WORD.findall(lines.code(unit.own_lines())))
    hooks: set[str] = set()  # the names that may be a hook, or build one
    ends = [_use_ends(code, given) for code in seed_codes + module_seeds]
    for code, found in zip(seed_codes + module_seeds, ends):
        words.update(WORD.findall(code))
        hooks.update(_hook_names(code, found))
    wrappers = {
        u.name
        for u, code, found in zip(seeds, seed_codes, ends)
        if _registers_a_parameter(u, _registration_arguments(code, found), lines.text, tokens)
    }
    classes = {id(m): u for u in units if u.is_class for m in u.members}
    callers = _owning_callers(units, seeds, seed_codes, wrappers, classes, tokens, lines, words, hooks)

    setups = _lifecycle_setups(units, seeds, classes, lines)  # what installs the seeds' hooks
    callers += _method_callers(seeds, callers, classes, lines)
    kept = {id(u) for u in seeds + callers + setups}
    for unit in seeds + setups:  # a teardown (``__exit__``...) must undo what its setup registered
        owner = classes.get(id(unit))
        partners = set(lifecycle_partners(unit.name))
        if "__exit__" in partners:  # ``with`` runs ``__enter__`` first: both halves
            partners.add("__enter__")
        if owner is not None and partners:
            kept.update(id(m) for m in owner.members if m.name in partners)
    kept.update(id(u) for u in units if u.name in hooks)
    for unit in units:  # an instance used as a hook: what it runs and what it sets up
        if unit.is_class and unit.name in hooks:
            kept.update(id(m) for m in unit.members if m.name in _CALLABLE_OBJECT)
    _keep_callees(units, [u for u in units if id(u) in kept], kept, lines, given)
    _prune(top, kept, lines)
    if not module_seeds:
        # Module-level code that binds no name the kept code mentions cannot matter:
        # imports included (they only serve to resolve names).
        for unit in units:
            if id(unit) in kept and unit not in seeds and unit not in callers:
                words.update(WORD.findall(lines.join(unit.own_lines())))
            elif unit.is_class and any(id(u) in kept for u in unit.walk()):
                # kept for what it holds: its header (the bases an import names) stays too
                words.update(WORD.findall(lines.join(unit.own_lines())))
        for statement in module_level:
            if isinstance(statement, _DROPPABLE) and not words.intersection(_bound_names(statement)):
                if not (
                    isinstance(statement, ast.ImportFrom) and any(a.name == "*" for a in statement.names)
                ) and not _imports_other_framework(statement):
                    lines.drop(statement.lineno, statement.end_lineno or statement.lineno)
    return lines.result()


def _matched_lines(lines: _Lines, tokens: NamePattern) -> set[int]:
    """The lines where ``tokens`` or a setup call (:data:`_SETUP_CALL`) match the code
    (:func:`_use_spans`)."""
    return {lines.number_at(start) for start, _ in _use_spans(lines.code_text, tokens)}


def _use_spans(code: str, tokens: NamePattern):
    """``(start, end)`` of the matches of ``NamePattern(tokens.pattern + "|" +
    _SETUP_CALL)`` in ``code`` (a match may come twice), found by two scans: every
    match is one of the two, on its own line, and where both match they end at the
    same place, the end of the name before its call's ``(``; the second scan looks
    only where a setup word occurs (the combined regex, which has no literal text to
    skip ahead to, is several times slower on a large file)."""
    for match in tokens.finditer(code):
        yield match.start(), match.end()
    for word in SETUP_WORDS:
        position = code.find(word)
        while position >= 0:
            start = position  # back to the start of the name holding the word
            while word_before(code, start):
                start -= 1
            for owner in ("self.", "cls."):
                begin = start - len(owner)
                if code.startswith(owner, begin) and begin >= 0 and not word_before(code, begin):
                    match = _SETUP_CALL_AT.match(code, begin)
                    if match is not None:
                        yield begin, match.end()
            position = code.find(word, position + 1)


def _lines_matching(lines: _Lines, patterns: list[str]) -> set[int]:
    """The lines of the code where the regex ``"|".join(patterns)`` matches, found one
    pattern at a time (each match is one pattern's on its own line; none of these
    spans lines), a leading ``\\b`` before a name checked by hand: a regex that
    starts with literal text skips ahead to it, one that starts with ``\\b`` tries
    every position of the file."""
    code = lines.code_text
    found: set[int] = set()
    for pattern in patterns:
        if pattern.startswith(r"\b") and (pattern[2:3].isalnum() or pattern[2:3] == "_"):
            regex = _compiled(pattern[2:])
            for match in regex.finditer(code):
                start = match.start()
                if not word_before(code, start):
                    found.add(lines.number_at(start))
        else:
            found.update(lines.number_at(m.start()) for m in _compiled(pattern).finditer(code))
    return found


_compiled = lru_cache(maxsize=512)(re.compile)


def _owning_callers(units, seeds, seed_codes, wrappers, classes, tokens, lines, words, hooks) -> list[_Unit]:
    """The units that own what the seeds register: callers of a registration wrapper,
    of a seed that returns or yields (its handles), or of a seed class's ``apply``; and,
    for callers that hand the handles on in turn, their callers, to
    :data:`hooklint.analysis.effects.MAX_DEPTH` levels.  What they mention is added to
    ``words`` and ``hooks``."""
    from hooklint.analysis.effects import MAX_DEPTH

    patterns = [r"\b" + re.escape(w) + r"\b" for w in sorted(wrappers)]
    callers: list[_Unit] = []
    level = [(unit, code, tokens.regex) for unit, code in zip(seeds, seed_codes)]
    for _ in range(MAX_DEPTH):
        fresh = []
        for unit, code, registers in level:  # who owns what this unit hands out
            owner = classes.get(id(unit))
            for pattern in (
                owner_calls(unit.name, code, False, registers, registers is not tokens.regex),
                owner and owner_calls(owner.name, code if unit.name == "__init__" else "", True, registers),
            ):
                if pattern and pattern not in patterns:
                    patterns.append(pattern)
                    fresh.append(pattern)
        if not patterns or (callers and not fresh):
            break  # nothing to look for, or the same callers again
        calls = re.compile("|".join(patterns))
        acquires = acquiring_calls(patterns)
        called = _lines_matching(lines, patterns)
        registrations = None
        # A seed that calls them hands on what it acquires so too (``attach(self)``),
        # unless it is an owner already.
        level = [
            (u, code, acquires)
            for u, code in zip(seeds, seed_codes)
            if r"\b" + re.escape(u.name) + r"\b" not in patterns and acquires.search(code)
        ]
        for unit in _innermost(units, called):
            if unit not in seeds and unit not in callers:
                if registrations is None:  # a long regex: compiled only when needed
                    registrations = NamePattern(tokens.pattern + "|" + calls.pattern)
                code = lines.code(unit.own_lines())
                callers.append(unit)
                level.append((unit, code, acquires))
                words.update(WORD.findall(code))
                hooks.update(_hook_names(code, registrations))
        if not level:
            break
    return callers


def _method_callers(seeds, callers, classes, lines: _Lines) -> list[_Unit]:
    """The methods that call a registering method of their class (``self._install(``,
    ``net.apply(self._install)``),
    and their callers in turn, to :data:`hooklint.analysis.effects.MAX_DEPTH` levels: a
    caller of a setup method (``self.register_hooks(model)``) acquires what the class
    removes elsewhere (:mod:`hooklint.analysis.handles`)."""
    from hooklint.analysis.effects import MAX_DEPTH

    found: list[_Unit] = []
    seen = {id(u) for u in seeds + callers}
    level = [u for u in seeds if id(u) in classes]
    for _ in range(MAX_DEPTH):
        fresh = []
        for owner in {id(classes[id(u)]): classes[id(u)] for u in level}.values():
            names = {u.name for u in level if classes[id(u)] is owner}
            called = r"(?:self|cls)\.(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")"
            # ``self._install(`` and ``net.apply(self._install)`` (run on every submodule)
            calls = re.compile(r"\b" + called + r"\s*\(|\.apply\(\s*" + called + r"\s*\)")
            # Only a member holding a line that names one can call one (the name does
            # not span lines; the call's parenthesis may be on the next).
            code = lines.code(range(owner.first, owner.last + 1))
            start = lines.offsets[owner.first - 1]
            naming = {
                lines.number_at(start + m.start())
                for m in _compiled(called).finditer(code)
                if not word_before(code, m.start())
            }
            for member in owner.members:
                if (
                    id(member) not in seen
                    and not member.is_class
                    and any(member.first <= n <= member.last for n in naming)
                    and calls.search(lines.code(member.own_lines()))
                ):
                    seen.add(id(member))
                    fresh.append(member)
        if not fresh:
            break
        found += fresh
        level = fresh
    return found


def _add_other_object_callers(units, seeds, seed_codes, module_level, module_seeds, lines: _Lines) -> None:
    """Seeds too: the code that calls a registering method of a class on another
    object (``self.taps[name].attach(fn)``, ``tap.attach(fn)``): the handle model
    acquires there what that method's class removes
    (:meth:`hooklint.analysis.handles.HandleModel.other_object_method`)."""
    members = {id(m) for u in units if u.is_class for m in u.members}
    names = sorted({u.name for u in seeds if id(u) in members and not u.is_class})
    if not names:
        return
    called = Guarded(r"\.\s*" + names_alternation(names) + r"\s*\(", after_no_self_or_cls)
    # ``net.apply(tap.attach)``: ``Module.apply`` runs the other object's method.
    applied = re.compile(_APPLIED_OTHER + names_alternation(names) + r"\s*\)")
    calling = {lines.number_at(m.start()) for m in called.finditer(lines.code_text)}
    calling.update(lines.number_at(m.start()) for m in applied.finditer(lines.code_text))
    if not calling:
        return

    def calls(code: str) -> bool:
        return called.search(code) is not None or applied.search(code) is not None

    for unit in _innermost(units, calling):
        code = lines.code(unit.own_lines())
        if unit not in seeds and calls(code):
            seeds.append(unit)
            seed_codes.append(code)
    for statement in module_level:
        last = statement.end_lineno or statement.lineno
        if any(statement.lineno <= n <= last for n in calling):
            code = lines.code(range(statement.lineno, last + 1))
            if calls(code) and code not in module_seeds:
                module_seeds.append(code)


def _lifecycle_setups(units, seeds, classes, lines: _Lines) -> list[_Unit]:
    """``@contextmanager`` functions and setup methods with a teardown in their class
    that call a seed (an installer of hooks), directly or through other functions, to
    :data:`hooklint.analysis.effects.MAX_DEPTH` levels: HL016's evidence."""
    from hooklint.analysis.effects import MAX_DEPTH

    def is_setup(unit: _Unit) -> bool:
        if any(last_name(d).endswith("contextmanager") for d in unit.node.decorator_list):
            return True
        owner = classes.get(id(unit))
        teardowns = lifecycle_teardowns(unit.name) if owner is not None else ()
        return any(m.name in teardowns for m in owner.members) if teardowns else False

    setups = [u for u in units if not u.is_class and u not in seeds and is_setup(u)]
    names = {u.name for u in seeds if not u.is_class}
    found: list[_Unit] = []
    seen = {id(u) for u in seeds}
    for _ in range(MAX_DEPTH):
        if not setups or not names:
            break
        # The units whose own code mentions a name: those holding a line that does.
        mentioned = _lines_matching(lines, [r"\b" + re.escape(n) + r"\b" for n in sorted(names)])
        mentioning = {id(u) for u in _innermost(units, mentioned)}
        names = set()
        for unit in units:
            if unit.is_class or id(unit) in seen or id(unit) not in mentioning:
                continue
            seen.add(id(unit))
            names.add(unit.name)
            if unit in setups:
                found.append(unit)
    return found


def _keep_callees(
    units: list[_Unit], reached: list[_Unit], kept: set[int], lines: _Lines, tokens: NamePattern
) -> None:
    """Keep the functions kept code calls by name (``helper(``, ``self._enter(``), to
    one more call than :data:`hooklint.analysis.effects.MAX_DEPTH` deep (the handle
    model follows removal helpers ``HELPER_DEPTH`` + 1 calls): a hook's state changes
    may sit in them, and a removal there turns a handle passed to an unknown call into
    one removed outside ``finally`` (a finding); the ``__init__`` of a class with
    kept methods (it builds the hook objects ``self.*`` holds); and the methods of kept
    classes that kept code calls on an object (``self.sizes.add(``: a method, not a
    container's growth)."""
    from hooklint.analysis.effects import MAX_DEPTH

    for unit in units:  # what ``self.attr`` holds (a hook object) is set up in ``__init__``
        if unit.is_class and any(id(m) in kept for m in unit.members):
            init = [m for m in unit.members if m.name == "__init__" and id(m) not in kept]
            kept.update(id(m) for m in init)
            reached = reached + init
    functions: dict[str, list[_Unit]] = {}  # what ``name(`` may call
    class_of: dict[int, _Unit] = {}
    class_named: dict[str, _Unit] = {}
    for unit in units:
        if unit.is_class:  # a class called: what its instances run when called
            class_named[unit.name] = unit
            functions.setdefault(unit.name, []).extend(m for m in unit.members if m.name in _CALLABLE_OBJECT)
            class_of.update((id(m), unit) for m in unit.members)
    for unit in units:
        if not unit.is_class and id(unit) not in class_of:
            functions.setdefault(unit.name, []).append(unit)
    named: dict[str, list[_Unit]] = {}  # what ``x.name(`` may call: a method of any class
    for unit in units:
        if not unit.is_class and id(unit) in class_of:
            named.setdefault(unit.name, []).append(unit)
    acting: dict[int, bool] = {}

    def acts(unit: _Unit) -> bool:
        """Whether a method may register or remove, in its own code or in a function or
        method of its class that it calls (what the handle model's ``_acts_on_hooks``
        looks at): only such methods are what ``x.name(`` resolves to."""
        found = acting.get(id(unit))
        if found is None:
            code = lines.code(unit.own_lines())
            helpers = [f for n in _BARE_CALLED.findall(code) for f in functions.get(n, ())]
            helpers += [m for n in _SELF_CALLED.findall(code) for m in methods(unit, n)]
            found = acting[id(unit)] = any(
                REMOVE_METHOD in text or tokens.search(text) is not None
                for text in [code] + [lines.code(h.own_lines()) for h in helpers]
            )
        return found

    def first_base(owner: _Unit) -> _Unit | None:
        bases = [b.id for b in owner.node.bases if isinstance(b, ast.Name)]
        return next((class_named[b] for b in bases if b in class_named), None)

    def methods(unit: _Unit, name: str, after_own: bool = False) -> list[_Unit]:
        """``self.name(`` in ``unit``: that method of its class or a same-file base
        (``after_own``: ``super().name(``, of a same-file base only)."""
        found, owner, seen = [], class_of.get(id(unit)), set()
        if after_own and owner is not None:
            owner = first_base(owner)
        while owner is not None and owner.name not in seen:
            seen.add(owner.name)
            found += [m for m in owner.members if m.name == name]
            owner = first_base(owner)
        return found

    # Functions bound to an object as methods (``m.start = start.__get__(m)``): ``x.start(``.
    bound = set(BOUND_METHOD.findall(lines.code_text)) if "__get__" in lines.code_text else set()
    for _ in range(MAX_DEPTH + 1):
        found: list[_Unit] = []
        for unit in reached:
            code = lines.code(unit.own_lines())
            for name in _BARE_CALLED.findall(code):
                found += functions.get(name, ())
                if name in class_named:  # a record built around a handle (``Entry(h, flag)``)
                    kept.add(id(class_named[name]))
            if ".apply" in code:  # ``model.apply(detach)`` runs ``detach(m)``
                for name in _APPLIED_NAME.findall(code):
                    found += functions.get(name, ())
            for name in _SELF_CALLED.findall(code):
                found += methods(unit, name)
            if "super(" in code:  # ``super().__init__(net)``: what a base sets ``self.*`` from
                for name in _SUPER_CALLED.findall(code):
                    found += methods(unit, name, after_own=True)
            for name in _OTHER_CALLED.findall(code):
                found += [m for m in named.get(name, ()) if id(m) not in kept and acts(m)]
                if name in bound:
                    found += functions.get(name, ())
        reached = [u for u in dict.fromkeys(found) if id(u) not in kept]
        if not reached:
            break
        kept.update(id(u) for u in reached)
    # ``self.sizes.add(name, n)`` in kept code, ``self.sizes`` a kept class's object: that
    # class's ``add`` says the call is its method, not a container's growth (a capture).
    kept_classes = {id(u) for u in units if u.is_class and id(u) in kept}
    if kept_classes:
        for unit in [u for u in units if not u.is_class and id(u) in kept]:
            for name in _OTHER_CALLED.findall(lines.code(unit.own_lines())):
                kept.update(id(m) for m in named.get(name, ()) if id(class_of[id(m)]) in kept_classes)


def _units(statements, lines: list[str]):
    for statement in statements:
        if not isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            continue
        first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])
        line = lines[first - 1]
        unit = _Unit(
            statement,
            statement.name,
            first,
            statement.end_lineno or statement.lineno,
            line[: len(line) - len(line.lstrip())],
        )
        if isinstance(statement, ast.ClassDef):
            unit.members = list(_units(statement.body, lines))
        yield unit


def _innermost(units: list[_Unit], numbers: set[int]) -> list[_Unit]:
    """The innermost unit holding each line (a line outside every unit has none)."""
    ordered = sorted(units, key=lambda u: u.first)
    firsts = [u.first for u in ordered]
    found: dict[int, _Unit] = {}
    for number in numbers:
        # Back from the last unit starting at or before the line: the first one that
        # reaches it is the innermost (an enclosing unit starts earlier).
        for index in range(bisect.bisect_right(firsts, number) - 1, -1, -1):
            unit = ordered[index]
            if unit.last >= number:
                found[id(unit)] = unit
                break
    return sorted(found.values(), key=lambda u: u.first)


def _prune(units: list[_Unit], kept: set[int], lines: _Lines) -> None:
    """Drop what is not kept.  A class stays when it or something in it is kept, so a
    dropped method needs no ``pass`` in its place, unless nothing else is left."""
    for unit in units:
        if unit.is_class and any(id(u) in kept for u in unit.walk()):
            _prune(unit.members, kept, lines)
            if not _keeps_a_statement(unit, kept):  # a class kept by name alone
                first = unit.members[0]
                lines.kept[first.first - 1] = 1
                line = lines.text[first.first - 1]
                lines.replaced[first.first] = first.indent + "pass" + line[len(line.rstrip("\r\n")) :]
        elif id(unit) not in kept:
            lines.drop(unit.first, unit.last)


def _keeps_a_statement(unit: _Unit, kept: set[int]) -> bool:
    member_nodes = {id(m.node) for m in unit.members}
    if any(id(s) not in member_nodes for s in unit.node.body):  # type: ignore[attr-defined]
        return True
    return any(id(m) in kept or (m.is_class and _keeps_a_statement(m, kept)) for m in unit.members)


def _hook_names(code: str, registrations: NamePattern | set[int]) -> set[str]:
    """Names in ``code`` that may be a hook or build one: every name used as a value
    (``self._capture``, ``partial(record, ...)``), what is called inside a
    registration call (``register_forward_hook(make_hook(name))``), and what is used
    to build a name passed there (``hook = make_hook(name)``).  ``registrations``:
    the pattern of the registration calls, or where their names end in ``code``."""
    names = set(_REFERENCE.findall(code))
    passed: set[str] = set()
    for end in _ends(code, registrations):
        arguments = _call_arguments(code, end)
        passed.update(WORD.findall(arguments))
    names |= passed
    for target, value in _ASSIGNMENT.findall(code):
        if target in passed:
            names.update(WORD.findall(value))
    return names


def _registration_arguments(code: str, registrations: NamePattern | set[int]) -> str:
    return "".join(_call_arguments(code, end) for end in _ends(code, registrations))


def _ends(code: str, registrations: NamePattern | set[int]):
    if isinstance(registrations, NamePattern):
        return [m.end() for m in registrations.finditer(code)]
    return sorted(registrations)


def _use_ends(code: str, tokens: NamePattern) -> set[int]:
    """Where the names of token uses and setup calls end in ``code`` (the ends of
    ``NamePattern(tokens.pattern + "|" + _SETUP_CALL)``'s matches: :func:`_use_spans`)."""
    return {end for _, end in _use_spans(code, tokens)}


def _call_arguments(code: str, start: int) -> str:
    """The text of the call that starts at or after ``start``: from its ``(`` to the
    matching ``)`` (strings are blanked already, so parentheses are code)."""
    opening = code.find("(", start)
    if opening < 0:
        return ""
    closing = closing_bracket(code, opening, opening + 5000)
    return code[opening : closing + 1] if closing >= 0 else code[opening : opening + 5000]


def _with_aliases(tree: ast.Module, tokens: NamePattern) -> NamePattern:
    """``tokens`` plus the local names of what a token names in an import
    (``register_module_forward_hook as add_post``: ``add_post(...)`` registers)."""
    # (an alias of a name is found by the name wherever it occurs: ``tokens.names``)
    aliases = {
        alias.asname
        for node in _module_level_imports(tree.body)
        for alias in node.names
        if alias.asname and tokens.names.search(alias.name)
    }
    if not aliases:
        return tokens
    extended = NamePattern(
        tokens.pattern + "|" + "|".join(rf"\b{re.escape(a)}\b(?=\s*\()" for a in sorted(aliases))
    )
    extended.names = NamePattern(
        tokens.names.pattern + "|" + "|".join(rf"\b{re.escape(a)}\b" for a in sorted(aliases))
    )
    return extended


def _module_level_imports(statements):
    """Imports at module level, also under ``if``/``try`` (an import in a function
    is in its seed with the calls it aliases)."""
    for statement in statements:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield statement
        elif isinstance(statement, (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try))):
            for block in (statement.body, statement.orelse, getattr(statement, "finalbody", [])):
                yield from _module_level_imports(block)
            for handler in getattr(statement, "handlers", []):
                yield from _module_level_imports(handler.body)


def _registers_a_parameter(unit: _Unit, code: str, lines: list[str], tokens: NamePattern) -> bool:
    """Whether a seed (``code``: its registrations' arguments, strings and comments
    blanked) passes one of its own parameters to a call on a token's line: an in-file
    registration wrapper, whose callers pass the hook; or puts a tensor hook on one
    (``def watch(t, sink): t.register_hook(...)``), whose callers say what tensor it is."""
    node = unit.node
    if not isinstance(node, _FUNCTIONS):
        return False
    params = parameters(node)
    if not params:
        return False
    passed = not params.isdisjoint(WORD.findall(code))  # a parameter among the arguments
    if not passed and not any(
        method in line
        for line in lines[node.lineno - 1 : node.end_lineno]
        for method in vocabulary.TENSOR_HOOK_METHODS
    ):
        return False  # neither: no need to walk the def
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not tokens.search(lines[call.lineno - 1]):
            continue
        values = list(call.args) + [k.value for k in call.keywords]
        if passed and any(isinstance(v, ast.Name) and v.id in params for v in values):
            return True
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in vocabulary.TENSOR_HOOK_METHODS
            and isinstance(func.value, ast.Name)
            and func.value.id in params
        ):
            return True
    return False


def _imports_other_framework(statement: ast.stmt) -> bool:
    """An import from another framework whose modules have torch's hook names
    (:data:`~hooklint.analysis.vocabulary.OTHER_FRAMEWORKS`): a rule reads it to tell
    that the file is not torch code, whatever the kept code names."""
    if isinstance(statement, ast.Import):
        modules = [alias.name for alias in statement.names]
    elif isinstance(statement, ast.ImportFrom) and not statement.level:
        modules = [statement.module or ""]
    else:
        return False
    return any(m.split(".", 1)[0] in vocabulary.OTHER_FRAMEWORKS for m in modules)


def _bound_names(statement: ast.stmt) -> set[str]:
    """The names a module-level assignment or import binds."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.split(".")[0] for alias in statement.names}
    targets = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
